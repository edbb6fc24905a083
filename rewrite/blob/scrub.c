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

struct scrub {
	struct replace_set **sets;	/* one per distinct file */
	size_t nsets;
	struct scrub_rule *rules;
	size_t nrules;
	struct buf view, out;
};

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
	buf_release(&s->view);
	buf_release(&s->out);
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
		est = est_made(b, path, len, s->out.ptr, s->out.len);
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
