/*
 * scrub.c - the replace-text action: every version of a matching text
 * file has the expressions of its rule's file replaced (replace/replace.h:
 * git-filter-repo's --replace-text format and semantics), and becomes a
 * new blob when anything matched. A blob with a NUL byte in its first
 * 8 KiB is binary and left alone, as git filter-repo does, unless the
 * rule says binary=yes.
 *
 * Each content is read and replaced once per rule (the result is
 * remembered by the content's id), whole: a regex can match across any
 * span, so the blob is in memory while it is replaced (docs/GUARANTEES.md: limitations).
 * The new blob is held like one read from the stream (spooled when
 * large) until it is written.
 */
#include <stdlib.h>
#include <string.h>

#include "../../replace/replace.h"
#include "way.h"

/* A content already seen by a rule, and what the rule made of it. */
struct scrub_memo {
	struct oid id;
	struct blob_info *out;
	UT_hash_handle hh;
};

struct scrub_rule {
	const struct rule *rule;
	struct replace_set *set;	/* borrowed from struct scrub */
	int binary;			/* binary=yes */
	struct scrub_memo *memo;
};

/* The last result at a path, the base of the next one's estimate. */
struct est_base {
	char *path;
	size_t len;
	struct buf last;
	UT_hash_handle hh;
};

/* bytes of results kept as estimate bases; past it they all go */
#define EST_BASES ((size_t)256 << 20)

struct scrub {
	struct replace_set **sets;	/* one per distinct file */
	size_t nsets;
	struct scrub_rule *rules;
	size_t nrules;
	struct buf view, out, delta;
	/* without made.c's writer (a preview, the filter): each result's
	 * packed size estimated as a delta against the path's last one */
	struct est_base *bases;
	size_t base_bytes;
};

static void bases_free(struct scrub *s)
{
	struct est_base *eb, *t;

	HASH_ITER(hh, s->bases, eb, t) {
		HASH_DEL(s->bases, eb);
		buf_release(&eb->last);
		free(eb->path);
		free(eb);
	}
	s->base_bytes = 0;
}

/*
 * The packed size of the result at p (n bytes) for path, as a pack would
 * store it: a delta against the path's last result when that delta is
 * less than half of it (deflated, as git stores a delta), else the
 * result itself, deflated (report.c's sample). The result becomes the
 * path's last.
 */
static uint64_t estimate(struct blobs *b, struct scrub *s, const char *path,
			 size_t len, const char *p, size_t n)
{
	struct est_base *eb;
	uint64_t est;

	HASH_FIND(hh, s->bases, path, len, eb);
	s->delta.len = 0;
	if (eb && delta_create((const unsigned char *)eb->last.ptr, eb->last.len,
			       (const unsigned char *)p, n, n / 2, &s->delta) == 1)
		est = report_est_buf(b->report, s->delta.ptr, s->delta.len);
	else
		est = report_est_buf(b->report, p, n);
	if (s->base_bytes + n > EST_BASES) {
		bases_free(s);
		eb = NULL;
	}
	if (!eb) {
		eb = xcalloc(1, sizeof(*eb));
		eb->path = xmemdup(path, len);
		eb->len = len;
		buf_init(&eb->last, SIZE_MAX / 2);
		HASH_ADD_KEYPTR(hh, s->bases, eb->path, eb->len, eb);
	}
	s->base_bytes -= eb->last.len;
	eb->last.len = 0;
	if (buf_add(&eb->last, p, n) == 0)
		s->base_bytes += n;
	return est;
}

/* The set of the file at path, loaded once. */
static int set_for(struct scrub *s, const char *path, struct replace_set **out,
		   struct err *e)
{
	size_t i;

	for (i = 0; i < s->nsets; i++) {
		if (!strcmp(replace_name(s->sets[i]), path)) {
			*out = s->sets[i];
			return 0;
		}
	}
	if (replace_load(out, path, e) < 0)
		return -1;
	s->sets = xrealloc(s->sets, (s->nsets + 1) * sizeof(*s->sets));
	s->sets[s->nsets++] = *out;
	return 0;
}

int scrub_init(struct blobs *b, struct err *e)
{
	struct buf path = BUF_INIT(BUF_MAX_DEFAULT);
	struct scrub *s = NULL;
	size_t i;
	int r = 0;

	for (i = 0; i < rules_count(b->rules) && r == 0; i++) {
		const struct rule *rule = rules_get(b->rules, i);
		const char *bin = rules_rule_option(rule, "binary", NULL);
		struct scrub_rule *sr;

		if (rules_rule_action(rule) != RULES_REPLACE_TEXT)
			continue;
		if (!s) {
			s = b->scrub = xcalloc(1, sizeof(*s));
			buf_init(&s->view, SIZE_MAX / 2);
			buf_init(&s->out, SIZE_MAX / 2);
			buf_init(&s->delta, SIZE_MAX / 2);
		}
		s->rules = xrealloc(s->rules, (s->nrules + 1) * sizeof(*s->rules));
		sr = memset(&s->rules[s->nrules++], 0, sizeof(*sr));
		sr->rule = rule;
		sr->binary = bin && !strcmp(bin, "yes");
		rules_option_path(rule, "replace-text", &path);
		r = set_for(s, path.ptr, &sr->set, e);
	}
	buf_release(&path);
	return r;
}

void scrub_free(struct blobs *b)
{
	struct scrub *s = b->scrub;
	struct scrub_memo *m, *t;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nrules; i++) {
		HASH_ITER(hh, s->rules[i].memo, m, t) {
			HASH_DEL(s->rules[i].memo, m);
			free(m);
		}
	}
	for (i = 0; i < s->nsets; i++)
		replace_free(s->sets[i]);
	free(s->sets);
	free(s->rules);
	bases_free(s);
	buf_release(&s->view);
	buf_release(&s->out);
	buf_release(&s->delta);
	free(s);
	b->scrub = NULL;
}

static struct scrub_rule *rule_of(struct scrub *s, const struct rule *rule)
{
	size_t i;

	for (i = 0; i < s->nrules; i++)
		if (s->rules[i].rule == rule)
			return &s->rules[i];
	return NULL;
}

int scrub_content(struct blobs *b, const struct rule *rule, const char *path,
		  size_t len, struct blob_info *bi, struct blob_info **out,
		  struct err *e)
{
	struct scrub *s = b->scrub;
	struct scrub_rule *sr = s ? rule_of(s, rule) : NULL;
	struct scrub_memo *m;
	const char *p;
	size_t n;
	uint64_t est = 0;
	int r;

	*out = bi;
	if (!sr)
		return 0;
	if (ensure_id(b, bi, e) < 0)
		return -1;
	HASH_FIND(hh, sr->memo, bi->id.hash, OID_RAW, m);
	if (m) {
		*out = m->out;
		return 0;
	}
	if (blob_view(b, bi, &s->view, &p, &n, e) < 0)
		return -1;
	r = !sr->binary && replace_is_binary(p, n) ? 0 :
	    replace_apply(sr->set, p, n, &s->out, e);
	if (r < 0)
		return -1;
	/* made.c's writer counts what it stores itself */
	if (r > 0 && b->report && !made_wants(b, s->out.len))
		est = estimate(b, s, path, len, s->out.ptr, s->out.len);
	if (r > 0 && !(*out = blob_made(b, s->out.ptr, s->out.len, est, e)))
		return -1;
	buf_reset(&s->view);
	bi->replaced = 1;
	m = xcalloc(1, sizeof(*m));
	m->id = bi->id;
	m->out = *out;
	HASH_ADD(hh, sr->memo, id.hash, OID_RAW, m);
	return 0;
}

void blobs_report_replace(const struct blobs *b)
{
	const struct scrub *s = b->scrub;
	struct replace_info info;
	size_t i, k;

	for (i = 0; s && i < s->nsets; i++) {
		for (k = 0; k < replace_count(s->sets[i]); k++) {
			replace_info(s->sets[i], k, &info);
			report_replace(b->report, "blobs", replace_name(s->sets[i]),
				       info.line, info.text, info.len,
				       info.replaced, info.changed);
		}
	}
}
