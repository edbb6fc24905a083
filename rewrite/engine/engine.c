/*
 * engine.c - the stream dispatcher: one function per command, keeping
 * fast-import's state (marks, branch table, tags, trees; the store of
 * marks and branches and their resolution is state.c) so that every
 * object id is known as fast-import will write it (docs/FORMATS.md 6).
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "../git/git.h"
#include "../../replace/replace.h"

static const char *input_name(const struct rw *rw)
{
	return rw->opt->input_name ? rw->opt->input_name : "<stdin>";
}

/* Adds the stream position to an error raised below the dispatcher that
 * asked for it (err_at_input): the one place that does. */
static int at_offset(struct rw *rw, struct err *e)
{
	e->at_input = 0;
	return err_prefix(e, "stream %s: byte offset %llu: ", input_name(rw),
			  (unsigned long long)stream_reader_offset(rw->in));
}

static int tree_loader(void *ctx, const struct oid *id, struct buf *body,
		       struct err *e)
{
	struct rw *rw = ctx;
	char hex[OID_HEX + 1];
	enum obj_type type;
	struct oid got;
	int r;

	oid_hex(id, hex);
	/* a tree may come from either repository; ids are unique */
	r = odb_read(rw->dst, hex, &type, &got, body, e);
	if (r == 0 && rw->dst != rw->src)
		r = odb_read(rw->src, hex, &type, &got, body, e);
	if (r < 0)
		return -1;
	if (r == 0 || type != OBJ_TREE)
		return err_set(e, ERR_IO, "tree %s not found in repository %s",
			       hex, odb_name(rw->src));
	return 0;
}

/* "reset REF" with "from" the stand-in to (none: the null id, which
 * deletes the ref unless a commit comes) or without when to is NULL. */
static int write_reset(struct stream_writer *w, const char *ref,
		       const struct prune_parent *to, struct err *e)
{
	char line[64 + OID_HEX], hex[OID_HEX + 1];
	int n;

	if (stream_write_raw(w, "reset ", 6, e) < 0 ||
	    stream_write_raw(w, ref, strlen(ref), e) < 0 ||
	    stream_write_raw(w, "\n", 1, e) < 0)
		return -1;
	if (!to)
		return 0;
	if (to->none)
		n = snprintf(line, sizeof(line), "from %s\n\n",
			     oid_hex(&oid_null, hex));
	else if (to->name_mark)
		n = snprintf(line, sizeof(line), "from :%llu\n\n",
			     (unsigned long long)to->name_mark);
	else
		n = snprintf(line, sizeof(line), "from %s\n\n",
			     oid_hex(&to->oid, hex));
	return stream_write_raw(w, line, (size_t)n, e);
}

static void branch_clear(struct rw *rw, struct branch *b)
{
	b->tip = oid_null;
	b->has_tip_orig = 0;
	b->tree = tree_new_empty(rw->ts);
	b->tip_gnew = b->tip_gorig = 0;
	b->tip_mark = 0;
	b->tip_outside = b->tip_skipped = b->pruned_away = 0;
	b->fi_stale = 0;	/* the reset that clears it goes out */
}

static int set_orig(struct rw *rw, struct oid *orig, int *has, struct err *e)
{
	const struct buf *o = &rw->cmd.original_oid;

	*has = 0;
	if (!o->len)
		return 0;
	if (o->len == 64)
		return err_set(e, ERR_USAGE,
			       "original-oid %s is a sha256 id: migrate supports "
			       "sha1 repositories only for now", o->ptr);
	if (oid_from_hex(orig, o->ptr, o->len) < 0)
		return 0; /* foreign ids (other VCS) are allowed; not mapped */
	*has = 1;
	return 0;
}

/* A blob command with rules: held until a commit decides its fate. */
static int blob_with_rules(struct rw *rw, struct err *e)
{
	struct oid id, orig;
	struct mark_ent *m;
	int has_orig;

	if (!rw->cmd.mark) {
		/* nothing can name it: pass it through */
		return copy_data(rw, rw->out, &id, e);
	}
	/* an original-oid that is not a sha1 id is not used */
	has_orig = rw->cmd.original_oid.len == OID_HEX &&
		   oid_from_hex(&orig, rw->cmd.original_oid.ptr, OID_HEX) == 0;
	m = mark_set(rw, rw->cmd.mark, OBJ_BLOB, &oid_null);
	if (has_orig)
		m->orig = orig;
	m->has_orig = has_orig;
	return blobs_read(rw->blobs, &m->bm, has_orig ? &orig : NULL, e);
}

static int do_blob(struct rw *rw, struct err *e)
{
	struct oid id, orig;
	struct mark_ent *m;
	int has_orig;

	if (rw->blobs)
		return blob_with_rules(rw, e);
	if (set_orig(rw, &orig, &has_orig, e) < 0)
		return err_at_input(e);
	if (copy_data(rw, rw->out, &id, e) < 0)
		return -1;
	if (rw->cmd.mark) {
		m = mark_set(rw, rw->cmd.mark, OBJ_BLOB, &id);
		m->size = rw->data_size;
		m->est = rw->data_est;
		m->orig = orig;
		m->has_orig = has_orig;
	}
	return 0;
}

/* ---- what fast-import checks ---- */

/* An rfc2822 date and the raw form git's parse_date() gives it. */
struct date_ent {
	char *date;
	char *raw;
	UT_hash_handle hh;
};

/*
 * The raw form of an rfc2822 date, as git fast-import stores it: git's own
 * parse_date() through `git var`, once per distinct date string.
 */
static int date_raw(struct rw *rw, const char *p, size_t n, const char **raw,
		    struct err *e)
{
	struct date_ent *d;
	struct buf out = BUF_INIT(4096);

	/* fast-import reads the line as a C string */
	n = strnlen(p, n);
	HASH_FIND(hh, rw->dates, p, n, d);
	if (!d) {
		char *date = xmemdup(p, n);	/* NUL-terminated */
		if (gitcmd_parse_date(date, &out, e) < 0) {
			free(date);
			buf_release(&out);
			return -1;
		}
		d = xcalloc(1, sizeof(*d));
		d->date = date;
		d->raw = buf_detach(&out, NULL);
		HASH_ADD_KEYPTR(hh, rw->dates, d->date, n, d);
	}
	*raw = d->raw;
	return 0;
}

/*
 * An ident as fast-import's parse_ident takes it; into raw (may be NULL)
 * the ident as fast-import stores it: with rfc2822 dates, the date made raw.
 */
static int check_ident(struct rw *rw, const char *what, const struct buf *v,
		       struct buf *raw, struct err *e)
{
	const char *why, *date;
	size_t at;

	if (stream_ident_split(v->ptr, v->len, &at, &why) < 0)
		return err_at_input((err_set(e, ERR_STREAM, "%s %.*s: %s", what,
					      (int)(v->len < 200 ? v->len : 200),
					      v->ptr, why), e));
	if (rw->date_rfc2822) {
		if (date_raw(rw, v->ptr + at, v->len - at, &date, e) < 0) {
			char reason[sizeof(e->msg)];

			if (e->kind != ERR_STREAM)
				return -1;
			memcpy(reason, e->msg, sizeof(reason));
			return err_at_input((err_set(e, ERR_STREAM,
				"%s %.*s: invalid rfc2822 date \"%.*s\" (%s; git "
				"fast-import --date-format=rfc2822 dies on it)", what,
				(int)(v->len < 200 ? v->len : 200), v->ptr,
				(int)(v->len - at < 80 ? v->len - at : 80), v->ptr + at,
				reason), e));
		}
		if (raw && (buf_set(raw, v->ptr, at) < 0 ||
			    buf_add(raw, date, strlen(date)) < 0))
			return err_at_input((err_set(e, ERR_STREAM, "%s too long",
						      what), e));
		return 0;
	}
	if (!stream_raw_date_ok(v->ptr + at, v->len - at, rw->date_strict))
		return err_at_input((err_set(e, ERR_STREAM,
			"%s %.*s: invalid raw date \"%.*s\" (expected <seconds> "
			"<+|-><hhmm>%s, as git fast-import takes it)", what,
			(int)(v->len < 200 ? v->len : 200), v->ptr,
			(int)(v->len - at < 80 ? v->len - at : 80), v->ptr + at,
			rw->date_strict ? " with a timezone of at most 1400" : ""), e));
	if (raw && buf_set(raw, v->ptr, v->len) < 0)
		return err_at_input((err_set(e, ERR_STREAM, "%s too long", what), e));
	return 0;
}

static int check_refname(const char *prefix, const struct buf *name,
			 struct err *e)
{
	struct buf full;
	int ok;

	buf_init(&full, STREAM_MAX_LINE + 16);
	ok = buf_printf(&full, "%s%.*s", prefix, (int)name->len, name->ptr) == 0 &&
	     stream_refname_ok(full.ptr, full.len);
	buf_release(&full);
	if (ok)
		return 0;
	return err_at_input((err_set(e, ERR_STREAM, "ref name '%s%.*s' is not one "
				      "git accepts (git check-ref-format)", prefix,
				      (int)(name->len < 200 ? name->len : 200),
				      name->ptr), e));
}

/* fast-import takes these only before the first other command, and dies
 * on what it does not know. */
static int check_feature(struct rw *rw, struct err *e)
{
	const struct buf *t = &rw->cmd.text;
	static const char *const plain[] = {
		"alias", "get-mark", "cat-blob", "relative-marks",
		"no-relative-marks", "done", "force", "notes", "ls", NULL
	};
	size_t i;

	if (rw->seen_data)
		return err_at_input((err_set(e, ERR_STREAM, "feature %s after "
			"a data command (git fast-import dies: features come first)",
			t->ptr), e));
	for (i = 0; plain[i]; i++)
		if (buf_eq(t, plain[i]))
			return 0;
	if (t->len > 12 && !memcmp(t->ptr, "date-format=", 12)) {
		const char *f = t->ptr + 12;
		if (rw->opt->date_format)
			return 0;	/* the command line wins, as in fast-import */
		if (!strcmp(f, "raw") || !strcmp(f, "raw-permissive")) {
			rw->date_strict = !strcmp(f, "raw");
			rw->date_rfc2822 = 0;
			return 0;
		}
		if (!strcmp(f, "now"))
			return err_at_input((err_set(e, ERR_STREAM, "feature date-format=now: "
				"dates are the time git fast-import runs, so no commit id can "
				"be known in advance; refusing"), e));
		if (!strcmp(f, "rfc2822")) {
			rw->date_rfc2822 = 1;	/* dates go through git's parse_date */
			return 0;
		}
		return err_at_input((err_set(e, ERR_STREAM,
			"unknown date format in feature %s", t->ptr), e));
	}
	return err_at_input((err_set(e, ERR_STREAM, "feature %s is not supported "
		"(git fast-import without --allow-unsafe-features takes alias, "
		"cat-blob, date-format=, done, force, get-mark, ls, notes, "
		"[no-]relative-marks; migrate cannot follow marks files)", t->ptr), e));
}

static int check_option(struct rw *rw, struct err *e)
{
	const struct buf *t = &rw->cmd.text;
	static const char *const known[] = {
		"max-pack-size=", "big-file-threshold=", "depth=",
		"active-branches=", NULL
	};
	const char *v;
	size_t i;

	if (t->len < 4 || memcmp(t->ptr, "git ", 4))
		return 0;	/* fast-import ignores other tools' options */
	if (rw->seen_data)
		return err_at_input((err_set(e, ERR_STREAM, "option %s after a "
			"data command (git fast-import dies: options come first)",
			t->ptr), e));
	v = t->ptr + 4;
	if (!strcmp(v, "quiet") || !strcmp(v, "stats") ||
	    !strcmp(v, "allow-unsafe-features") ||
	    !strncmp(v, "export-pack-edges=", 18))
		return 0;
	for (i = 0; known[i]; i++) {
		size_t k = strlen(known[i]);
		if (!strncmp(v, known[i], k) && v[k] >= '0' && v[k] <= '9')
			return 0;
	}
	return err_at_input((err_set(e, ERR_STREAM, "option %s is not one "
		"git fast-import takes", t->ptr), e));
}

/* ---- commits ---- */

static void add_parent_at(struct cur_commit *c, size_t i, const struct oid *id)
{
	while (i >= c->parents_alloc) {
		c->parents_alloc = c->parents_alloc ? 2 * c->parents_alloc : 4;
		c->parents = xrealloc(c->parents,
				      c->parents_alloc * sizeof(*c->parents));
	}
	c->parents[i] = *id;
}

static void add_parent(struct cur_commit *c, const struct oid *id)
{
	if (c->nparents == c->parents_alloc) {
		c->parents_alloc = c->parents_alloc ? 2 * c->parents_alloc : 4;
		c->parents = xrealloc(c->parents,
				      c->parents_alloc * sizeof(*c->parents));
	}
	c->parents[c->nparents++] = *id;
}

/* The branch's tip becomes what t names. */
static void branch_set_tip(struct rw *rw, struct branch *b,
			   const struct target *t)
{
	b->tip = t->oid;
	b->tip_orig = t->orig;
	b->has_tip_orig = t->has_orig;
	b->tree = t->tree ? t->tree : tree_new_empty(rw->ts);
	b->tip_gnew = t->gnew;
	b->tip_gorig = t->gorig;
	b->tip_mark = t->name_mark;
	b->tip_outside = t->outside;
	b->tip_skipped = t->skipped;
	/* a reset to a commit pruned with all its history: the ref goes */
	b->pruned_away = t->skipped && oid_is_null(&t->oid);
	/* the from or reset that names it goes out */
	b->fi_stale = 0;
}

static int commit_from(struct rw *rw, struct branch *b, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct target t;

	if (cmd->from.kind == STREAM_REF_NONE)
		return 0;
	if (cmd->from.kind == STREAM_REF_NAME && buf_eq(&cmd->from.name, b->name))
		return err_at_input((err_set(e, ERR_STREAM,
			"cannot create branch %s from itself", b->name), e));
	if (resolve(rw, &cmd->from, &t, e) < 0)
		return e->kind == ERR_IO ? ids_lost(rw, e) : err_at_input(e);
	if (t.type != OBJ_COMMIT)
		return err_at_input((err_set(e, ERR_STREAM,
			"'from' names a %s, not a commit", obj_type_name(t.type)), e));
	ref_translate(&cmd->from, &t);
	ref_standin(&cmd->from, &t);
	branch_set_tip(rw, b, &t);
	return 0;
}

static int commit_merges(struct rw *rw, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct target t;
	size_t i;

	for (i = 0; i < cmd->nmerges; i++) {
		if (resolve(rw, &cmd->merges[i], &t, e) < 0) {
			if (e->kind != ERR_IO)
				return err_at_input(e);
			return ids_lost(rw, e);
		}
		if (t.type != OBJ_COMMIT || oid_is_null(&t.oid))
			return err_at_input((err_set(e, ERR_STREAM,
				"'merge' does not name a commit"), e));
		ref_translate(&cmd->merges[i], &t);
		ref_standin(&cmd->merges[i], &t);
		add_parent(&rw->cur, &t.oid);
	}
	return 0;
}

/* ---- parents when commits are pruned (prune.c) ---- */

static struct prune_parent *pp_add(struct rw *rw, const struct target *t,
				   int src)
{
	struct cur_commit *c = &rw->cur;
	struct prune_parent *p;

	if (c->norig == c->pp_alloc) {
		c->pp_alloc = c->pp_alloc ? 2 * c->pp_alloc : 4;
		c->pp = xrealloc(c->pp, c->pp_alloc * sizeof(*c->pp));
	}
	p = &c->pp[c->norig++];
	memset(p, 0, sizeof(*p));
	p->oid = t->oid;
	p->tree = t->tree ? t->tree : tree_new_empty(rw->ts);
	p->src = src;
	p->skipped = t->skipped;
	p->unheard = t->unheard;
	p->none = oid_is_null(&t->oid);
	p->name_mark = t->name_mark;
	p->outside = t->outside;
	p->gnew = t->gnew;
	p->gorig = t->gorig;
	/* a commit from outside the stream is a root of the graphs */
	if (!p->none && !p->gnew)
		p->gnew = prune_outside(rw->prune, PRUNE_NEW, &t->oid);
	if (!p->gorig && t->has_orig && !oid_is_null(&t->orig))
		p->gorig = prune_outside(rw->prune, PRUNE_ORIG, &t->orig);
	return p;
}

/* What the output calls parent p: its ref as the input wrote it, or for
 * a stand-in its mark or id (a stand-in always has one: prunable() keeps
 * a commit whose stand-in the output could not name). */
static void pp_ref(struct rw *rw, const struct prune_parent *p,
		   struct stream_ref *out)
{
	const struct stream_ref *in = p->src == 0 ? &rw->cmd.from :
				      p->src > 0 ? &rw->cmd.merges[p->src - 1] : NULL;

	if (in && !p->skipped && !p->unheard) {
		out->kind = in->kind;
		out->mark = in->mark;
		buf_set(&out->name, in->name.ptr, in->name.len);
	} else {
		ref_name_commit(out, p->name_mark, &p->oid);
	}
}

/* The output's from and merge lines become the parents kept. */
static void parents_rewrite(struct rw *rw)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct cur_commit *c = &rw->cur;
	struct stream_ref *v;
	size_t i;

	v = xcalloc(c->nparents ? c->nparents : 1, sizeof(*v));
	for (i = 0; i < c->nparents; i++) {
		buf_init(&v[i].name, STREAM_MAX_LINE);
		pp_ref(rw, &c->pp[i], &v[i]);
	}
	/* an implicit first parent stays implicit */
	if (c->nparents && c->pp[0].src < 0 && !c->pp[0].skipped &&
	    !c->pp[0].unheard)
		v[0].kind = STREAM_REF_NONE;
	cmd->from.kind = c->nparents ? v[0].kind : STREAM_REF_NONE;
	if (c->nparents) {
		cmd->from.mark = v[0].mark;
		buf_set(&cmd->from.name, v[0].name.ptr, v[0].name.len);
	}
	cmd->nmerges = c->nparents > 1 ? c->nparents - 1 : 0;
	for (i = 1; i < c->nparents; i++) {
		cmd->merges[i - 1].kind = v[i].kind;
		cmd->merges[i - 1].mark = v[i].mark;
		buf_set(&cmd->merges[i - 1].name, v[i].name.ptr, v[i].name.len);
	}
	for (i = 0; i < c->nparents; i++)
		buf_release(&v[i].name);
	free(v);
}

/*
 * The parents of the commit being read, when pruning: resolved as
 * fast-import resolves them, then trimmed as git filter-repo trims them
 * (prune.c); the output's from and merge lines name the parents kept.
 * The branch's tree stays the input's first parent's: when that one was
 * pruned away and another parent becomes the first, the commit's text
 * starts with deleteall (its changes are against an empty tree).
 */
static int commit_parents_pruning(struct rw *rw, struct branch *b,
				  struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct cur_commit *c = &rw->cur;
	uint32_t *nodes;
	struct target t;
	size_t i, n;

	c->norig = 0;
	if (cmd->from.kind != STREAM_REF_NONE) {
		if (commit_from(rw, b, e) < 0)
			return -1;
		branch_target(b, &t);
		pp_add(rw, &t, 0);
	} else if (!oid_is_null(&b->tip) || b->tip_skipped) {
		branch_target(b, &t);
		pp_add(rw, &t, -1);
	}
	for (i = 0; i < cmd->nmerges; i++) {
		if (resolve(rw, &cmd->merges[i], &t, e) < 0) {
			if (e->kind != ERR_IO)
				return err_at_input(e);
			return ids_lost(rw, e);
		}
		if (t.type != OBJ_COMMIT || (oid_is_null(&t.oid) && !t.skipped))
			return err_at_input((err_set(e, ERR_STREAM,
				"'merge' does not name a commit"), e));
		ref_translate(&cmd->merges[i], &t);
		pp_add(rw, &t, (int)i + 1);
	}
	if (rw->no_ids)
		return 0;
	n = c->norig;
	nodes = xcalloc(n ? n : 1, sizeof(*nodes));
	for (i = 0; i < n; i++)
		nodes[i] = c->pp[i].gorig;
	c->gorig = prune_node(rw->prune, PRUNE_ORIG, nodes, n);
	free(nodes);
	c->parents_pruned = n == 1 && c->pp[0].skipped;
	c->first_none = n && c->pp[0].none;
	c->nparents = prune_trim(rw->prune, c->pp, n, &c->new1st);
	if (c->nparents < n && c->new1st == SIZE_MAX)
		c->parents_pruned = 1;
	for (i = 0; i < c->nparents; i++)
		add_parent_at(c, i, &c->pp[i].oid);
	if (n && c->nparents == 0)
		branch_clear(rw, b);	/* a root now */
	parents_rewrite(rw);
	return 0;
}

static int do_commit(struct rw *rw, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct cur_commit *c = &rw->cur;
	struct branch *b;

	if (check_refname("", &cmd->ref, e) < 0 ||
	    (cmd->has_author &&
	     check_ident(rw, "author", &cmd->author, &c->author, e) < 0) ||
	    check_ident(rw, "committer", &cmd->committer, &c->committer, e) < 0)
		return -1;
	b = branch_get(rw, &cmd->ref, 1);
	c->active = 1;
	c->branch = b;
	c->nparents = 0;
	c->mark = cmd->mark;
	rw->commits_seen++;
	if (rw->opt->rewrite_message_ids && cmd->message.len) {
		/* made at the first message: the map grows as commits go */
		if (!rw->msgids)
			rw->msgids = msgids_new(rw->cmap);
		msgids_apply(rw->msgids, cmd->message.ptr, cmd->message.len);
	}
	/* after the ids, as git filter-repo does */
	if (msg_replace(rw, &cmd->message, e) < 0)
		return err_at_input(e);
	if (set_orig(rw, &c->orig, &c->has_orig, e) < 0)
		return err_at_input(e);
	rw->commits_with_orig += c->has_orig;
	c->nchanges = 0;
	c->new1st = SIZE_MAX;
	c->norig = 0;
	c->parents_pruned = 0;
	c->root_reset = 0;
	if (rw->prune && !rw->no_ids) {
		if (commit_parents_pruning(rw, b, e) < 0)
			return -1;
	} else {
		int had_from = cmd->from.kind != STREAM_REF_NONE;

		if (!rw->no_ids && commit_from(rw, b, e) < 0)
			return -1;
		/* a from an earlier run's map says was pruned down to
		 * nothing: a root (ref_standin took the from away) */
		c->root_reset = had_from && cmd->from.kind == STREAM_REF_NONE;
		/* fast-import's branch is behind: the parent by id */
		if (!rw->no_ids && cmd->from.kind == STREAM_REF_NONE &&
		    b->fi_stale && !oid_is_null(&b->tip))
			ref_name_commit(&cmd->from, 0, &b->tip);
		if (!rw->no_ids && !oid_is_null(&b->tip))
			add_parent(c, &b->tip);
		if (!rw->no_ids && commit_merges(rw, e) < 0)
			return -1;
	}
	c->root = c->base = b->tree;
	c->fanout = notes_fanout(b->num_notes);
	c->has_author = cmd->has_author;
	c->has_encoding = cmd->has_encoding;
	/* author and committer: set by check_ident, with raw dates */
	if (buf_set(&c->encoding, cmd->encoding.ptr, cmd->encoding.len) < 0 ||
	    buf_set(&c->message, cmd->message.ptr, cmd->message.len) < 0)
		return err_at_input((err_set(e, ERR_STREAM, "commit too large"), e));
	if (rw->blobs) {
		struct blob_commit *bc = &c->bc;
		bc->root = &c->root;
		bc->parents = c->parents;
		bc->nparents = c->nparents;
		bc->orig = c->orig;
		bc->has_orig = c->has_orig;
		bc->branch = b;
		bc->branch_name = b->name;
		bc->tip = b->tip;
		bc->tip_orig = b->tip_orig;
		bc->has_tip_orig = b->has_tip_orig;
		bc->seq = rw->commits_seen;
		rw->cout = blobs_commit_begin(rw->blobs, bc);
	}
	c->start_at = stream_writer_pos(rw->cout);
	/* a first parent pruned away: the commit is a root (fast-import
	 * would take the branch's tip), or its changes are against an empty
	 * tree, not against the parent that comes first now */
	if ((c->root_reset || (rw->prune && !rw->no_ids && c->norig &&
			       !c->nparents)) &&
	    write_reset(rw->cout, b->name, NULL, e) < 0)
		return -1;
	if (stream_write_cmd(rw->cout, cmd, e) < 0)
		return -1;
	c->changes_at = stream_writer_pos(rw->cout);
	c->inlines_before = stream_writer_inlines(rw->cout);
	c->has_notes = 0;
	if (rw->prune && !rw->no_ids && c->nparents && c->norig &&
	    c->first_none)
		return stream_write_raw(rw->cout, "deleteall\n", 10, e);
	return 0;
}

static int do_modify(struct rw *rw, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct oid id;

	if (cmd->dataref.kind == STREAM_REF_INLINE) {
		if (copy_data(rw, rw->cout, &id, e) < 0)
			return -1;
	} else {
		if (!rw->no_ids && modify_id(rw, &id, e) < 0)
			return err_at_input(e);
		if (rw->report && cmd->dataref.kind == STREAM_REF_MARK) {
			struct mark_ent *m = mark_get(rw, cmd->dataref.mark);
			if (m && m->type == OBJ_BLOB)
				report_path(rw->report, cmd->path.ptr, cmd->path.len, &id, m->size);
		}
		if (stream_write_cmd(rw->cout, cmd, e) < 0)
			return -1;
	}
	if (rw->no_ids)
		return 0;
	if (tree_set(rw->ts, &rw->cur.root, cmd->path.ptr, cmd->path.len,
		     cmd->mode, &id, e) < 0)
		return e->kind == ERR_IO ? ids_lost(rw, e) : err_at_input(e);
	return 0;
}

/* M, D, C and R with rules: the blob's way places them (blob.h). */
static int change_with_rules(struct rw *rw, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct mark_ent *m = NULL;
	struct oid id;
	uint32_t mode;

	if (cmd->kind == STREAM_DELETE)
		return blobs_delete(rw->blobs, e);
	if (cmd->kind != STREAM_MODIFY)
		return blobs_copy(rw->blobs, e);
	if (cmd->dataref.kind == STREAM_REF_INLINE)
		return blobs_modify(rw->blobs, NULL, NULL, e);
	if (modify_id(rw, &id, e) < 0)
		return err_at_input(e);
	mode = tree_mode_normalize(cmd->mode);
	if (cmd->dataref.kind == STREAM_REF_MARK && mode != TREE_MODE_GITLINK &&
	    !tree_mode_is_dir(mode)) {
		m = mark_get(rw, cmd->dataref.mark);
		if (!m->bm.blob)
			return err_at_input((err_set(e, ERR_STREAM,
				"mark :%llu is not a blob",
				(unsigned long long)cmd->dataref.mark), e));
	}
	return blobs_modify(rw->blobs, &id, m ? &m->bm : NULL, e);
}

static int do_change(struct rw *rw, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	int r = 0;

	rw->cur.nchanges++;
	rw->cur.has_notes |= cmd->kind == STREAM_NOTEMODIFY;
	if (rw->blobs && !rw->no_ids && cmd->kind != STREAM_NOTEMODIFY &&
	    cmd->kind != STREAM_DELETEALL) {
		r = change_with_rules(rw, e);
		if (r == BLOB_IDS_LOST)
			return ids_lost(rw, e) < 0 ? -1 : stream_write_cmd(rw->cout, cmd, e);
		return r;
	}
	if (cmd->kind == STREAM_MODIFY)
		return do_modify(rw, e);
	if (cmd->kind == STREAM_NOTEMODIFY)
		return notes_modify(rw, e);
	if (!rw->no_ids) {
		if (cmd->kind == STREAM_DELETE)
			r = tree_remove(rw->ts, &rw->cur.root, cmd->path.ptr,
					cmd->path.len, e);
		else if (cmd->kind == STREAM_COPY || cmd->kind == STREAM_RENAME)
			r = tree_copy(rw->ts, &rw->cur.root, cmd->path.ptr,
				      cmd->path.len, cmd->path2.ptr, cmd->path2.len,
				      cmd->kind == STREAM_RENAME, e);
		else if (cmd->kind == STREAM_DELETEALL) {
			rw->cur.root = tree_new_empty(rw->ts);
			rw->cur.branch->num_notes = 0;
			if (rw->blobs)
				blobs_forget_splits(rw->blobs);
		}
		if (r < 0)
			return e->kind == ERR_IO ? ids_lost(rw, e) : err_at_input(e);
	}
	return stream_write_cmd(rw->cout, cmd, e);
}

/* fast-import stores an ident that starts with '<' (empty name) with a
 * second space before it (docs/FORMATS.md 2.2). */
static int add_ident(struct buf *body, const char *key, const struct buf *v)
{
	return buf_printf(body, "%s %s%.*s\n", key, v->len && v->ptr[0] == '<' ? " " : "",
			  (int)v->len, v->ptr);
}

/* 1 when the trees a and b are the same (their ids), 0 if not, -1. */
static int same_tree(struct rw *rw, struct tnode *a, const struct oid *b,
		     struct err *e)
{
	struct oid ia;

	if (tree_hash(rw->ts, a, &ia, e) < 0)
		return -1;
	return oid_eq(&ia, b);
}

struct agree {
	struct rw *rw;
	struct tnode *other;
	struct err *e;
};

/* tree_diff: the path's new version must be the other parent's. */
static int agree_one(void *ctx, const char *path, size_t len,
		     uint32_t old_mode, const struct oid *old_id,
		     uint32_t new_mode, const struct oid *new_id)
{
	struct agree *a = ctx;
	uint32_t mode;
	struct oid id;
	int r;

	(void)old_mode;
	(void)old_id;
	r = tree_lookup(a->rw->ts, a->other, path, len, &mode, &id, a->e);
	if (r < 0)
		return -1;
	if (!new_id)
		return r ? 1 : 0;
	return r && mode == new_mode && oid_eq(&id, new_id) ? 0 : 1;
}

/*
 * Whether the commit just read goes, as git filter-repo's _prunable
 * decides with --prune-empty=auto (the trees stand for its file
 * changes): a commit that became empty goes (its tree is its first
 * parent's, or empty without one), one that was empty from the start
 * only when a parent of it was pruned too. A merge goes only when it
 * became degenerate (prune_trim gave new1st) and its changes against
 * its first parent are all in that parent already. A commit whose
 * stand-in the output could not name (a commit of the stream without a
 * mark) stays. 1, 0, or -1 with e set.
 */
static int prunable(struct rw *rw, const struct oid *tree, struct err *e)
{
	struct cur_commit *c = &rw->cur;
	const struct prune_parent *to;
	struct agree a = { rw, NULL, e };
	int r;

	if (c->nparents >= 2 && c->new1st == SIZE_MAX)
		return 0;
	to = c->new1st != SIZE_MAX ? &c->pp[c->new1st] :
	     c->nparents ? &c->pp[0] : NULL;
	if (to && !to->name_mark && !to->outside)
		return 0;
	if (c->nparents < 2) {
		r = same_tree(rw, to ? to->tree : tree_new_empty(rw->ts), tree, e);
		if (r <= 0)
			return r;
		return c->nchanges ? 1 : c->parents_pruned;
	}
	if (c->new1st == 0)
		return same_tree(rw, c->pp[0].tree, tree, e);
	a.other = to->tree;
	r = tree_diff(rw->ts, c->base, c->root, agree_one, &a, e);
	return r < 0 ? -1 : r == 0;
}

/*
 * The commit just read was pruned: nothing of it goes out but a reset
 * of its branch to its stand-in (filter-repo writes the same), which
 * its mark and branch stand for from now on; the commit map says it has
 * no new commit (40 zeros), as filter-repo's does.
 */
static int commit_pruned(struct rw *rw, struct err *e)
{
	struct cur_commit *c = &rw->cur;
	struct branch *b = c->branch;
	const struct prune_parent *to;
	struct prune_parent none = { .none = 1 };
	struct tnode *tree;
	struct mark_ent *m;

	to = c->new1st != SIZE_MAX ? &c->pp[c->new1st] :
	     c->nparents ? &c->pp[0] : &none;
	tree = to->none ? tree_new_empty(rw->ts) : to->tree;
	if (write_reset(rw->out, b->name, to, e) < 0)
		return -1;
	b->fi_stale = 0;	/* fast-import's branch is the stand-in */
	b->tip = to->oid;
	b->tip_orig = c->orig;
	b->has_tip_orig = c->has_orig;
	b->tree = tree;
	b->tip_gnew = to->gnew;
	b->tip_gorig = c->gorig;
	b->tip_mark = to->name_mark;
	b->tip_outside = to->outside;
	b->tip_skipped = 1;
	b->deleted = to->none;
	b->pruned_away = to->none;
	b->fi_deleted |= to->none;
	if (c->mark) {
		m = mark_set(rw, c->mark, OBJ_COMMIT, &to->oid);
		m->tree = tree;
		m->orig = c->orig;
		m->has_orig = c->has_orig;
		m->gnew = to->gnew;
		m->gorig = c->gorig;
		m->name_mark = to->name_mark;
		m->outside = to->outside;
		m->pruned = 1;
		m->bm.declared = 0;	/* fast-import never hears of it */
	}
	if (c->has_orig) {
		cmap_put(rw->cmap, &c->orig, &oid_null);
		rw->commits_rewritten++;
	}
	rw->commits_pruned++;
	tree_state_freeze(rw->ts);
	return 0;
}

/*
 * With the trees stored by the run, the run writes the commit too
 * (blobs_store_commit), beside its trees, and its text goes: fast-import
 * never hears of it (its mark, its branch's tip: named by id from then
 * on, fi_stale) and does no work for it. Not for a commit whose text
 * carries data of its own (an inline M or N: that blob exists nowhere
 * else) or whose branch has notes (fast-import counts them for its own
 * fanout). 1 when the text went, 0 when it stays, -1 with e set.
 */
static int commit_text_cut(struct rw *rw, struct err *e)
{
	struct cur_commit *c = &rw->cur;

	if (!rw->trees_made || rw->no_ids || c->has_notes ||
	    c->branch->num_notes ||
	    stream_writer_inlines(rw->cout) != c->inlines_before)
		return 0;
	if (stream_writer_cut(rw->cout, c->start_at) < 0)
		return err_set(e, ERR_IO, "internal error: cannot cut the "
			       "commit's text");
	return 1;
}

/* tree.c's tree_made_fn: a tree the run made, to the writer. */
static int tree_made(void *ctx, const char *path, size_t len,
		     const struct buf *body, const struct oid *id,
		     const struct oid *from, struct err *e)
{
	struct rw *rw = ctx;

	if (blobs_store_tree(rw->blobs, id, from, path, len, body, e) < 0) {
		rw->trees_failed = 1;
		return -1;
	}
	return 0;
}

static int commit_end(struct rw *rw, struct err *e)
{
	struct cur_commit *c = &rw->cur;
	struct buf *body = &rw->scratch;
	char hex[OID_HEX + 1];
	struct oid tree, id;
	struct mark_ent *m;
	size_t i;
	int r = 0, pruned = 0, self = 0;

	c->active = 0;
	if (rw->blobs) {
		r = rw->no_ids ? 0 : blobs_commit_attrs(rw->blobs, e);
		if (r == BLOB_IDS_LOST)
			r = ids_lost(rw, e);
		if (r < 0) {
			rw->cout = rw->out;
			return -1;
		}
	}
	if (!rw->no_ids && notes_fanout(c->branch->num_notes) != c->fanout) {
		int64_t n = notes_change_fanout(rw, &c->root,
					  notes_fanout(c->branch->num_notes), e);
		if (n < 0 && ids_lost(rw, e) < 0)
			return -1;
		if (n >= 0)
			c->branch->num_notes = (uint64_t)n;
	}
	if (!rw->no_ids && tree_hash(rw->ts, c->root, &tree, e) < 0 &&
	    (rw->trees_failed || ids_lost(rw, e) < 0))
		return -1;
	if (!rw->no_ids && rw->prune && (pruned = prunable(rw, &tree, e)) < 0)
		return err_at_input(e);
	if (!pruned && (self = commit_text_cut(rw, e)) < 0)
		return -1;
	if (!rw->no_ids && !pruned) {
		buf_reset(body);
		r |= buf_printf(body, "tree %s\n", oid_hex(&tree, hex));
		for (i = 0; i < c->nparents; i++)
			r |= buf_printf(body, "parent %s\n",
					oid_hex(&c->parents[i], hex));
		r |= add_ident(body, "author", c->has_author ? &c->author :
			       &c->committer);
		r |= add_ident(body, "committer", &c->committer);
		annexlog_note_time(rw, &c->committer);
		if (c->has_encoding)
			r |= buf_printf(body, "encoding %.*s\n",
					(int)c->encoding.len, c->encoding.ptr);
		r |= buf_addch(body, '\n');
		r |= buf_add(body, c->message.ptr, c->message.len);
		if (r)
			return err_at_input((err_set(e, ERR_STREAM,
						     "commit too large"), e));
		obj_hash_buf(rw->hash, OBJ_COMMIT, body->ptr, body->len, &id);
		/* in the segment of its trees */
		if (self && blobs_store_commit(rw->blobs, &id, body, e) < 0) {
			rw->cout = rw->out;
			return -1;
		}
	}
	if (rw->blobs) {
		r = blobs_commit_end(rw->blobs, !pruned, e);
		rw->cout = rw->out;
		if (r < 0)
			return -1;
	}
	if (rw->no_ids)
		return stream_write_cmd(rw->cout, &rw->cmd, e);
	if (pruned)
		return commit_pruned(rw, e);

	c->branch->tip = id;
	c->branch->tip_orig = c->orig;
	c->branch->has_tip_orig = c->has_orig;
	c->branch->tree = c->root;
	c->branch->deleted = 0;
	if (rw->prune) {
		uint32_t *nodes = xcalloc(c->nparents ? c->nparents : 1,
					  sizeof(*nodes));
		for (i = 0; i < c->nparents; i++)
			nodes[i] = c->pp[i].gnew;
		c->branch->tip_gnew = prune_node(rw->prune, PRUNE_NEW, nodes,
						 c->nparents);
		free(nodes);
		c->branch->tip_gorig = c->gorig;
	}
	/* a commit the run wrote is named by id (as one outside the
	 * stream: pruning names its stand-ins so too) */
	c->branch->tip_mark = self ? 0 : c->mark;
	c->branch->tip_outside = self;
	c->branch->tip_skipped = 0;
	c->branch->pruned_away = 0;
	c->branch->fi_stale = self;
	if (c->mark) {
		m = mark_set(rw, c->mark, OBJ_COMMIT, &id);
		m->tree = c->root;
		m->orig = c->orig;
		m->has_orig = c->has_orig;
		m->gnew = c->branch->tip_gnew;
		m->gorig = c->branch->tip_gorig;
		if (self) {
			m->name_mark = 0;
			m->outside = 1;
			m->unheard = 1;
			m->bm.declared = 0;	/* not in fast-import's marks */
		}
	}
	if (c->has_orig)
		cmap_put(rw->cmap, &c->orig, &id);
	if (c->has_orig && !oid_eq(&c->orig, &id))
		rw->commits_rewritten++;
	if (rw->blobs) {
		/* the branch moved: the blob's way sees it as it is now */
		c->bc.tip = id;
		c->bc.tip_orig = c->orig;
		c->bc.has_tip_orig = c->has_orig;
		blobs_commit_written(rw->blobs, &id);
	}
	tree_state_freeze(rw->ts);
	return self ? 0 : stream_write_cmd(rw->cout, &rw->cmd, e);
}

/* ---- tags, resets, aliases ---- */

static void tag_cancel(struct rw *rw, const char *name)
{
	struct tag_ent **p = &rw->tags, *t;

	while ((t = *p)) {
		if (!strcmp(t->name, name)) {
			*p = t->next;
			free(t->name);
			free(t);
		} else {
			p = &t->next;
		}
	}
	for (rw->tags_tail = &rw->tags; *rw->tags_tail;
	     rw->tags_tail = &(*rw->tags_tail)->next)
		;
}

/* The type of an object named by raw id, for a tag's "type" line. */
static int outside_type(struct rw *rw, struct target *t, struct err *e)
{
	char hex[OID_HEX + 1];
	struct oid got;
	int r;

	if (t->translated || t->type != OBJ_NONE)
		return 0;
	r = odb_read(rw->src, oid_hex(&t->orig, hex), &t->type, &got, NULL, e);
	if (r == 0)
		return err_set(e, ERR_IO, "object %s not in repository %s", hex,
			       odb_name(rw->src));
	return r < 0 ? -1 : 0;
}

static int tag_target(struct rw *rw, struct target *t, struct err *e)
{
	struct stream_ref *from = &rw->cmd.from;
	struct oid id;

	memset(t, 0, sizeof(*t));
	if (from->kind == STREAM_REF_OID && !branch_get(rw, &from->name, 0) &&
	    oid_from_hex(&id, from->name.ptr, from->name.len) == 0 &&
	    !cmap_get(rw->cmap, &id)) {
		/* any object type may be tagged: ask for its type only */
		t->orig = t->oid = id;
		t->has_orig = 1;
		return outside_type(rw, t, e);
	}
	if (resolve(rw, from, t, e) < 0)
		return -1;
	if (oid_is_null(&t->oid) && !t->skipped)
		return err_set(e, ERR_STREAM, "cannot tag an empty branch");
	return 0;
}

static int do_tag(struct rw *rw, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct buf *body = &rw->scratch;
	char hex[OID_HEX + 1];
	struct tag_ent *tag;
	struct mark_ent *m;
	struct target t;
	struct oid id, orig;
	int has_orig, r = 0;

	if (set_orig(rw, &orig, &has_orig, e) < 0)
		return err_at_input(e);
	if (check_refname("refs/tags/", &cmd->ref, e) < 0 ||
	    (cmd->has_tagger &&
	     check_ident(rw, "tagger", &cmd->tagger, &rw->ident_raw, e) < 0))
		return -1;
	if (msg_replace(rw, &cmd->message, e) < 0)
		return err_at_input(e);
	if (rw->no_ids)
		return stream_write_cmd(rw->out, cmd, e);
	if (rw->blobs && cmd->from.kind == STREAM_REF_MARK) {
		struct mark_ent *fm = mark_get(rw, cmd->from.mark);
		if (fm && blobs_declare(rw->blobs, &fm->bm, e) < 0)
			return -1;
	}
	if (tag_target(rw, &t, e) < 0) {
		if (e->kind != ERR_IO)
			return err_at_input(e);
		if (ids_lost(rw, e) < 0)
			return -1;
		return stream_write_cmd(rw->out, cmd, e);
	}
	ref_translate(&cmd->from, &t);
	/* a tag of a commit pruned with its whole history goes, as in
	 * git filter-repo: the ref map says so (40 zeros), for the run to
	 * delete it where it is */
	if (t.skipped && oid_is_null(&t.oid)) {
		tag = xcalloc(1, sizeof(*tag));
		tag->name = xmemdup(cmd->ref.ptr, cmd->ref.len);
		tag->orig = orig;
		tag->has_orig = has_orig;
		*rw->tags_tail = tag;
		rw->tags_tail = &tag->next;
		return 0;
	}
	ref_standin(&cmd->from, &t);
	buf_reset(body);
	r |= buf_printf(body, "object %s\ntype %s\ntag %.*s\n", oid_hex(&t.oid, hex),
			obj_type_name(t.type), (int)cmd->ref.len, cmd->ref.ptr);
	if (cmd->has_tagger)
		r |= add_ident(body, "tagger", &rw->ident_raw);
	r |= buf_addch(body, '\n');
	r |= buf_add(body, cmd->message.ptr, cmd->message.len);
	if (r)
		return err_at_input((err_set(e, ERR_STREAM, "tag too large"), e));
	obj_hash_buf(rw->hash, OBJ_TAG, body->ptr, body->len, &id);
	if (cmd->mark) {
		m = mark_set(rw, cmd->mark, OBJ_TAG, &id);
		m->orig = orig;
		m->has_orig = has_orig;
	}
	tag = xcalloc(1, sizeof(*tag));
	tag->name = xmemdup(cmd->ref.ptr, cmd->ref.len);
	tag->oid = id;
	tag->orig = orig;
	tag->has_orig = has_orig;
	*rw->tags_tail = tag;
	rw->tags_tail = &tag->next;
	return stream_write_cmd(rw->out, cmd, e);
}

static int do_reset(struct rw *rw, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct branch *b;

	if (check_refname("", &cmd->ref, e) < 0)
		return -1;
	b = branch_get(rw, &cmd->ref, 1);
	branch_clear(rw, b);
	b->deleted = 0;
	if (!rw->no_ids && commit_from(rw, b, e) < 0)
		return -1;
	if (cmd->from.kind == STREAM_REF_OID && oid_is_null(&b->tip)) {
		b->deleted = b->fi_deleted = 1;
		if (!strncmp(b->name, "refs/tags/", 10))
			tag_cancel(rw, b->name + 10);
	}
	return stream_write_cmd(rw->out, cmd, e);
}

static int do_alias(struct rw *rw, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct mark_ent *m;
	struct target t;

	if (!rw->no_ids) {
		if (resolve(rw, &cmd->from, &t, e) < 0) {
			if (e->kind != ERR_IO)
				return err_at_input(e);
			if (ids_lost(rw, e) < 0)
				return -1;
		} else {
			ref_translate(&cmd->from, &t);
			ref_standin(&cmd->from, &t);
			m = mark_set(rw, cmd->mark, t.type, &t.oid);
			m->tree = t.tree;
			m->orig = t.orig;
			m->has_orig = t.has_orig;
			m->gnew = t.gnew;
			m->gorig = t.gorig;
			m->name_mark = t.name_mark;
			m->outside = t.outside;
			m->pruned = t.skipped;
			if (t.skipped && oid_is_null(&t.oid)) {
				m->bm.declared = 0;
				return 0;	/* an alias of nothing */
			}
			if (t.unheard) {
				/* fast-import aliases only what it knows */
				m->unheard = 1;
				m->bm.declared = 0;
				return 0;
			}
		}
	}
	return stream_write_cmd(rw->out, cmd, e);
}

/* ---- the loop ---- */

/*
 * get-mark, cat-blob, ls: checked as fast-import checks them, and kept
 * where the stream put them (inside a commit, in the commit's text). A
 * blob they name that rules hold back is written first, so fast-import
 * knows the mark; cat-blob answers the content the stream gave, even for
 * a blob the rules convert or drop (it then enters the target's object
 * database, unreachable).
 */
static int do_query(struct rw *rw, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	struct stream_ref *d = cmd->kind == STREAM_GET_MARK ? NULL : &cmd->dataref;
	uint64_t mark = d ? d->mark : cmd->mark;
	struct mark_ent *m = NULL;

	if (!rw->no_ids && (!d || d->kind == STREAM_REF_MARK)) {
		m = mark_get(rw, mark);
		if (!m)
			return err_at_input((err_set(e, ERR_STREAM,
				"mark :%llu was never defined (git fast-import dies "
				"\"not declared\")", (unsigned long long)mark), e));
		if (cmd->kind == STREAM_CAT_BLOB && m->type != OBJ_BLOB)
			return err_at_input((err_set(e, ERR_STREAM,
				"cat-blob :%llu names a %s, not a blob",
				(unsigned long long)mark, obj_type_name(m->type)), e));
		if (cmd->kind == STREAM_LS && m->type == OBJ_BLOB)
			return err_at_input((err_set(e, ERR_STREAM,
				"ls :%llu names a blob, not a tree-ish",
				(unsigned long long)mark), e));
	}
	if (rw->blobs && m && blobs_declare(rw->blobs, &m->bm, e) < 0)
		return -1;
	if (stream_write_cmd(rw->cout, cmd, e) < 0)
		return -1;
	/* a frontend may wait for the answer: let fast-import see the query
	 * (inside a commit with rules, it goes out when the commit ends) */
	if (rw->cout != rw->out)
		return 0;
	if (rw->blobs && blobs_sync(rw->blobs, e) < 0)
		return -1;
	return stream_writer_flush(rw->out, e);
}

static int dispatch(struct rw *rw, struct err *e)
{
	struct stream_cmd *cmd = &rw->cmd;
	int in_commit = rw->cur.active;

	switch (cmd->kind) {
	case STREAM_MODIFY: case STREAM_DELETE: case STREAM_COPY:
	case STREAM_RENAME: case STREAM_DELETEALL: case STREAM_NOTEMODIFY:
		return do_change(rw, e);
	case STREAM_COMMIT_END:
		return commit_end(rw, e);
	case STREAM_LS: case STREAM_CAT_BLOB:
		return do_query(rw, e);
	case STREAM_COMMENT:
		rw->seen_data = 1;	/* fast-import: any line but feature/option */
		return stream_write_cmd(rw->cout, cmd, e);
	default:
		break;
	}
	if (in_commit)
		return err_at_input((err_set(e, ERR_STREAM,
			"commit not ended before the next command"), e));
	switch (cmd->kind) {
	case STREAM_FEATURE:
		if (check_feature(rw, e) < 0)
			return -1;
		/* ours is written first; a second one would be redundant */
		if (buf_eq(&cmd->text, "done")) {
			rw->input_wants_done = 1;
			return 0;
		}
		return stream_write_cmd(rw->out, cmd, e);
	case STREAM_OPTION:
		if (check_option(rw, e) < 0)
			return -1;
		return stream_write_cmd(rw->out, cmd, e);
	default:
		break;
	}
	rw->seen_data = 1;
	switch (cmd->kind) {
	case STREAM_BLOB:
		return do_blob(rw, e);
	case STREAM_COMMIT:
		return do_commit(rw, e);
	case STREAM_TAG:
		return do_tag(rw, e);
	case STREAM_RESET:
		return do_reset(rw, e);
	case STREAM_ALIAS:
		return do_alias(rw, e);
	case STREAM_GET_MARK:
		return do_query(rw, e);
	case STREAM_DONE:
		/* ours comes last, after every check: fast-import stops here */
		rw->input_done = 1;
		return 0;
	default:
		return stream_write_cmd(rw->out, cmd, e);
	}
}

static void rw_release(struct rw *rw)
{
	struct mark_ent *m, *mt;
	struct branch *b, *bt;
	struct tag_ent *t, *tn;
	struct date_ent *d, *dt;

	HASH_ITER(hh, rw->marks, m, mt) {
		HASH_DEL(rw->marks, m);
		free(m);
	}
	HASH_ITER(hh, rw->branches, b, bt) {
		HASH_DEL(rw->branches, b);
		free(b->name);
		free(b);
	}
	for (t = rw->tags; t; t = tn) {
		tn = t->next;
		free(t->name);
		free(t);
	}
	HASH_ITER(hh, rw->dates, d, dt) {
		HASH_DEL(rw->dates, d);
		free(d->date);
		free(d->raw);
		free(d);
	}
	buf_release(&rw->ident_raw);
	buf_release(&rw->cur.author);
	buf_release(&rw->cur.committer);
	buf_release(&rw->cur.encoding);
	buf_release(&rw->cur.message);
	free(rw->cur.parents);
	free(rw->cur.pp);
	prune_free(rw->prune);
	buf_release(&rw->scratch);
	stream_cmd_release(&rw->cmd);
	stream_reader_free(rw->in);
	msgids_free(rw->msgids);
	replace_free(rw->msg_replace);
	buf_release(&rw->msg_out);
	blobs_free(rw->blobs);
	report_free(rw->report);
	stream_writer_free(rw->out);
	tree_state_free(rw->ts);
	if (rw->dst != rw->src)
		odb_free(rw->dst);
	odb_free(rw->src);
	cmap_free(rw->cmap);
	obj_hash_free(rw->hash);
}

static void rw_init(struct rw *rw, const struct rw_options *opt, int in_fd,
		    int out_fd)
{
	enum odb_reader reader;

	memset(rw, 0, sizeof(*rw));
	pipe_widen(in_fd);
	pipe_widen(out_fd);
	rw->opt = opt;
	rw->in = stream_reader_new_fd(in_fd, input_name(rw));
	rw->out = stream_writer_new_fd(out_fd, "<stdout>");
	rw->cout = rw->out;
	stream_cmd_init(&rw->cmd);
	rw->tags_tail = &rw->tags;
	rw->ts = tree_state_new(tree_loader, rw);
	rw->src = odb_new(opt->source_repo);
	rw->dst = opt->target_repo ? odb_new(opt->target_repo) : rw->src;
	if (!opt->object_reader || odb_reader_parse(opt->object_reader, &reader) < 0)
		reader = ODB_READER_AUTO;	/* the command line checked it */
	odb_set_reader(rw->src, reader, opt->quiet);
	if (rw->dst != rw->src)
		odb_set_reader(rw->dst, reader, opt->quiet);
	rw->cmap = cmap_new();
	rw->hash = obj_hash_new();
	buf_init(&rw->scratch, STREAM_MAX_TEXT + 4096);
	buf_init(&rw->cur.author, STREAM_MAX_LINE);
	buf_init(&rw->ident_raw, STREAM_MAX_LINE);
	buf_init(&rw->cur.committer, STREAM_MAX_LINE);
	buf_init(&rw->cur.encoding, STREAM_MAX_LINE);
	buf_init(&rw->cur.message, STREAM_MAX_TEXT);
	buf_init(&rw->msg_out, STREAM_MAX_TEXT);
	rw->want_ids = opt->commit_map || opt->ref_map || opt->export_marks;
	rw->date_strict = !opt->date_format || strcmp(opt->date_format, "raw-permissive");
}

static struct progress_counts progress_counts(const struct rw *rw)
{
	struct progress_counts n = {
		rw->commits_seen,
		rw->blobs ? blobs_conversions(rw->blobs) : 0,
		stream_reader_offset(rw->in) +
			(rw->blobs ? blobs_bytes_read(rw->blobs) : 0),
		0, 0, 0,
		rw->blobs ? blobs_bytes_read_ahead(rw->blobs) : 0
	};

	if (rw->blobs)
		blobs_acted(rw->blobs, &n.replaced, &n.split, &n.dropped);
	return n;
}

static int rw_stream(struct rw *rw, struct err *e)
{
	static const char feature_done[] = "feature done\n";
	uint64_t before;
	int r;

	/* a map written into a device or a pipe is not read back */
	if (rw->opt->commit_map && !path_is_special(rw->opt->commit_map) &&
	    cmap_load(rw->cmap, rw->opt->commit_map, e) < 0)
		return -1;
	rw->report = report_new(rw->opt->report, rw->opt->report_json);
	/* the size before is the source's own, known for free: one batch */
	if (report_disk_sizes(rw->report, rw->opt->source_repo, e) < 0)
		return -1;
	if (rw->opt->replace_message &&
	    replace_load(&rw->msg_replace, rw->opt->replace_message, e) < 0)
		return -1;
	if (rw->opt->rules_set) {
		struct blob_options bo = {
			.rules_set = rw->opt->rules_set,
			.rules = rw->opt->rules,
			.store = rw->opt->store,
			.dry_run = rw->opt->dry_run,
			.quiet = rw->opt->quiet,
			.verify_split = rw->opt->verify_split,
			.source_repo = rw->opt->source_repo,
			.lfs_objects = rw->opt->lfs_objects,
			.n_lfs_objects = rw->opt->n_lfs_objects,
			.missing_keep = rw->opt->missing &&
					!strcmp(rw->opt->missing, "keep"),
			.annex_dir = rw->opt->annex_dir,
			.strip_ids = rw->opt->strip_blobs_with_ids,
			.threads = rw->opt->threads ? atoi(rw->opt->threads) : 0,
			.objects_dir = rw->opt->objects_dir,
			.objects_level = rw->opt->objects_level,
			.objects_list = rw->opt->objects_list,
			.made_dir = rw->opt->made_dir,
			.made_level = rw->opt->made_level,
			.made_list = rw->opt->made_list,
			.new_blobs = rw->opt->new_blobs,
			.fixup = rw->opt->peer.fixup,
		};
		struct blob_env env = {
			rw->in, rw->out, &rw->cmd, rw->ts, rw->src, rw->dst,
			rw->hash, rw->report
		};
		if (blobs_new(&rw->blobs, &bo, &env, e) < 0)
			return -1;
		if ((rw->trees_made = blobs_stores_trees(rw->blobs)))
			tree_state_on_made(rw->ts, tree_made, rw);
		/* without rules nothing can become empty: the stream passes */
		if (!rw->opt->no_prune_empty)
			rw->prune = prune_new();
	}
	if (stream_write_raw(rw->out, feature_done, sizeof(feature_done) - 1, e) < 0)
		return -1;
	progress_init(&rw->progress, rw->opt->quiet, rw->opt->progress,
		      rw->opt->progress_total);
	before = stream_reader_offset(rw->in);
	while ((r = stream_reader_next(rw->in, &rw->cmd, e)) > 0) {
		if (rw->blobs)
			blobs_ahead(rw->blobs, before);
		if (dispatch(rw, e) < 0)
			return e->at_input ? at_offset(rw, e) : -1;
		before = stream_reader_offset(rw->in);
		if (rw->progress.on) {
			struct progress_counts n = progress_counts(rw);
			progress_tick(&rw->progress, &n);
		}
	}
	if (r < 0)
		return -1;
	if (rw->cur.active)
		return err_set(e, ERR_STREAM, "stream %s: ended inside a commit",
			       input_name(rw));
	if (rw->input_wants_done && !rw->input_done)
		return err_set(e, ERR_STREAM, "stream %s: byte offset %llu: the stream "
			       "declared 'feature done' but ended without 'done' "
			       "(truncated?)", input_name(rw),
			       (unsigned long long)stream_reader_offset(rw->in));
	if (rw->progress.on) {
		struct progress_counts n = progress_counts(rw);
		progress_done(&rw->progress, &n);
	}
	/* the blobs stored beside the stream are in named packs before the
	 * reports count them */
	if (rw->blobs && (blobs_flush(rw->blobs, e) < 0 ||
			  blobs_settle(rw->blobs, e) < 0))
		return -1;
	return annexlog_write(rw, e);
}

/*
 * What the user cannot see from the stream and may not expect: a commit
 * map that maps nothing, because the export had no original ids; and
 * where the LFS objects went (a default store is the repository of the
 * current directory, which need not be the one fast-import writes).
 */
static void summary(struct rw *rw)
{
	const char *store = rw->blobs ? blobs_store(rw->blobs) : NULL;
	uint64_t n = rw->blobs ? blobs_converted(rw->blobs) : 0;

	if (rw->opt->commit_map && rw->commits_seen && !rw->commits_with_orig)
		warning("migrate: warning: no commit of the stream had an "
			"original-oid, so the commit map maps none of them "
			"(export with git fast-export --show-original-ids)");
	if (rw->commits_pruned)
		warning("migrate: %llu commit(s) pruned: the rules left them empty "
			"(--no-prune-empty keeps them)",
			(unsigned long long)rw->commits_pruned);
	if (store && n)
		warning("migrate: %llu LFS object(s) stored in %s",
			(unsigned long long)n, store);
	store = rw->blobs ? blobs_annex_store(rw->blobs) : NULL;
	n = rw->blobs ? blobs_annexed(rw->blobs) : 0;
	if (store && n)
		warning("migrate: %llu git-annex object(s) stored in %s",
			(unsigned long long)n, store);
}

/*
 * Before `done`: each branch whose tip the run wrote itself (fi_stale)
 * is reset to it by id, so fast-import writes its ref as it would have.
 * Not a tag's own name: the tag's ref is what fast-import writes there
 * (tag_branches_unset), and a reset of a branch fast-import once marked
 * for deletion would take the tag out of its list.
 */
static int stale_branches_reset(struct rw *rw, struct err *e)
{
	struct branch *b, *tmp;
	const struct tag_ent *t;
	struct prune_parent tip = { .none = 0 };	/* named by id */
	int r = 0;

	HASH_ITER(hh, rw->branches, b, tmp) {
		if (r < 0)
			break;
		if (!b->fi_stale || oid_is_null(&b->tip))
			continue;
		t = NULL;
		if (!strncmp(b->name, "refs/tags/", 10))
			for (t = rw->tags; t; t = t->next)
				if (!strcmp(b->name + 10, t->name) &&
				    !oid_is_null(&t->oid))
					break;
		if (t)
			continue;
		tip.oid = b->tip;
		r = write_reset(rw->out, b->name, &tip, e);
		b->fi_stale = 0;
	}
	return r;
}

/*
 * git fast-export names the commits it first reaches from an annotated
 * tag by the tag's ref (`commit refs/tags/v1.0`): fast-import then holds
 * a branch of that name beside the tag, and at its end writes the ref
 * twice, the branch and then the tag over it (a loose ref each, most of
 * its end on a history with many tags). In a run, whose refs are read
 * from the side repository, each such branch is reset to no commit
 * before `done`: fast-import writes no ref for it, and the tag's write,
 * the last one already, is the only one. The refs fast-import leaves are
 * the same. 0, or -1 with e set.
 */
static int tag_branches_unset(struct rw *rw, struct err *e)
{
	struct buf name = BUF_INIT(BUF_MAX_DEFAULT);
	const struct tag_ent *t;
	struct branch *b;
	int r = 0;

	for (t = rw->tags; r == 0 && t; t = t->next) {
		if (oid_is_null(&t->oid))
			continue;	/* fast-import never heard of it */
		buf_reset(&name);
		buf_printf(&name, "refs/tags/%s", t->name);
		b = branch_get(rw, &name, 0);
		/* fast-import takes the tag itself out of its list when a
		 * branch it once marked for deletion is reset */
		if (!b || oid_is_null(&b->tip) || b->fi_deleted)
			continue;
		r = write_reset(rw->out, name.ptr, NULL, e);
		if (r == 0)
			r = stream_write_raw(rw->out, "\n", 1, e);
	}
	buf_release(&name);
	return r;
}

int rw_filter(const struct rw_options *opt, int in_fd, int out_fd,
	      struct err *e)
{
	static const char done[] = "done\n";
	char *tmp[OUT_N] = { NULL };
	struct rules *own = NULL;
	struct rw_options with_rules;
	struct rw rw;
	int r;

	if (opt->commit_map_format) {
		enum cmap_format f;
		if (cmap_format_parse(opt->commit_map_format, &f) < 0)
			return err_set(e, ERR_USAGE,
				       "--commit-map-format: expected filter-repo, "
				       "lfs or bfg, got '%s'", opt->commit_map_format);
	}
	/* the rules, parsed here unless the caller did (migrate run) */
	if (!opt->rules_set && rw_rules_wanted(opt)) {
		if (rw_rules_build(&own, NULL, opt, e) < 0)
			return -1;
		with_rules = *opt;
		with_rules.rules_set = own;
		opt = &with_rules;
	}
	rw_init(&rw, opt, in_fd, out_fd);
	r = rw_stream(&rw, e);
	if (rw.blobs && blobs_split_failures(rw.blobs))
		warning("migrate: verify-split: %llu version(s) do not "
			"reassemble from their parts",
			(unsigned long long)blobs_split_failures(rw.blobs));
	if (r == 0 && rw.want_ids && rw.no_ids)
		r = err_set(e, ERR_IO, "object ids could not be computed");
	if (r == 0)
		r = outputs_prepare(&rw, tmp, e);
	/* store objects in place before `done` lets fast-import commit */
	if (r == 0 && rw.blobs)
		r = blobs_finish(rw.blobs, e);
	if (r == 0 && rw.trees_made)
		r = stale_branches_reset(&rw, e);
	if (r == 0 && rw.trees_made)
		r = tag_branches_unset(&rw, e);
	/* `done` last: fast-import commits nothing unless we got here */
	if (r == 0)
		r = stream_write_raw(rw.out, done, sizeof(done) - 1, e);
	if (r == 0)
		r = stream_writer_flush(rw.out, e);
	if (r == 0)
		r = outputs_commit(&rw, tmp, e);
	else
		outputs_drop(tmp);
	if (r == 0 && !opt->quiet)
		summary(&rw);
	rw_release(&rw);
	rules_free(own);
	return r;
}
