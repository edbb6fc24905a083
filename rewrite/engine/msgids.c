/*
 * msgids.c - commit messages that name old commits (full ids, or
 * abbreviations of MSGIDS_ABBREV_MIN hex digits and more) are rewritten
 * to the new ids through the commit map, as git-filter-repo does: the
 * one tokenizer of the filter and of `migrate remap` (the rule is in
 * engine.h). Old ids are indexed by their first MSGIDS_ABBREV_MIN
 * digits, so judging a word costs the same however long the history.
 */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "../git/git.h"
#include "engine.h"

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int is_word(char c)
{
	return is_hex(c) || (c >= 'g' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_';
}

struct prefix_ent {
	uint32_t key;		/* the first 7 hex digits, as 28 bits */
	struct oid *olds;
	size_t n, alloc;
	UT_hash_handle hh;
};

struct msgids {
	const struct cmap *map;	/* borrowed */
	struct prefix_ent *byprefix;
	size_t indexed;		/* map entries indexed so far */
};

static uint32_t prefix_key(const char *hex)
{
	uint32_t k = 0;
	int i;

	for (i = 0; i < MSGIDS_ABBREV_MIN; i++)
		k = k << 4 | (uint32_t)(hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
	return k;
}

static int index_one(void *ctx, const struct oid *old, const struct oid *new)
{
	struct msgids *m = ctx;
	char hex[OID_HEX + 1];
	struct prefix_ent *p;
	uint32_t key = prefix_key(oid_hex(old, hex));

	(void)new;
	HASH_FIND(hh, m->byprefix, &key, sizeof(key), p);
	if (!p) {
		p = xcalloc(1, sizeof(*p));
		p->key = key;
		HASH_ADD(hh, m->byprefix, key, sizeof(p->key), p);
	}
	if (p->n == p->alloc) {
		p->alloc = p->alloc ? 2 * p->alloc : 2;
		p->olds = xrealloc(p->olds, p->alloc * sizeof(*p->olds));
	}
	p->olds[p->n++] = *old;
	return 0;
}

struct msgids *msgids_new(const struct cmap *map)
{
	struct msgids *m = xcalloc(1, sizeof(*m));

	m->map = map;
	return m;
}

void msgids_free(struct msgids *m)
{
	struct prefix_ent *p, *t;

	if (!m)
		return;
	HASH_ITER(hh, m->byprefix, p, t) {
		HASH_DEL(m->byprefix, p);
		free(p->olds);
		free(p);
	}
	free(m);
}

/* the map grows as commits are written: index what is new */
static void index_new(struct msgids *m)
{
	m->indexed += cmap_each_from(m->map, m->indexed, index_one, m);
}

/* The verdict on a word of lowercase hex digits (index up to date). */
static enum msgid_verdict judge(const struct msgids *m, const char *hex,
				size_t len, struct oid *old)
{
	char full[OID_HEX + 1];
	const struct oid *found = NULL;
	struct prefix_ent *p;
	uint32_t key;
	size_t i;

	if (len < MSGIDS_ABBREV_MIN || len > OID_HEX)
		return MSGID_UNKNOWN;
	key = prefix_key(hex);
	HASH_FIND(hh, m->byprefix, &key, sizeof(key), p);
	for (i = 0; p && i < p->n; i++) {
		if (memcmp(oid_hex(&p->olds[i], full), hex, len))
			continue;
		if (found)
			return MSGID_AMBIGUOUS;
		found = &p->olds[i];
	}
	if (!found)
		return MSGID_UNKNOWN;
	if (old)
		*old = *found;
	return len == OID_HEX ? MSGID_FULL : MSGID_UNIQUE;
}

enum msgid_verdict msgids_judge(struct msgids *m, const char *hex,
				size_t len, struct oid *old)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!is_hex(hex[i]))
			return MSGID_UNKNOWN;
	index_new(m);
	return judge(m, hex, len, old);
}

void msgids_scan(struct msgids *m, const char *text, size_t len,
		 void (*fn)(void *ctx, size_t off, size_t n,
			    enum msgid_verdict v, const struct oid *old),
		 void *ctx)
{
	size_t i = 0;

	index_new(m);
	while (i < len) {
		size_t start = i, n;
		enum msgid_verdict v;
		struct oid old;

		if (!is_hex(text[i]) || (i > 0 && is_word(text[i - 1]))) {
			i++;
			continue;
		}
		while (i < len && is_hex(text[i]))
			i++;
		n = i - start;
		if (n < MSGIDS_ABBREV_MIN || n > OID_HEX ||
		    (i < len && is_word(text[i])))
			continue;
		v = judge(m, text + start, n, &old);
		fn(ctx, start, n, v,
		   v == MSGID_FULL || v == MSGID_UNIQUE ? &old : NULL);
	}
}

struct apply {
	const struct msgids *m;
	char *text;
	size_t changed;
};

static void apply_one(void *ctx, size_t off, size_t n, enum msgid_verdict v,
		      const struct oid *old)
{
	struct apply *a = ctx;
	char hex[OID_HEX + 1];
	const struct oid *new;

	if (v != MSGID_FULL && v != MSGID_UNIQUE)
		return;
	/* a commit an earlier run dropped (40 zeros in the map) has no new
	 * id: its old one stays, as git-filter-repo leaves it */
	new = cmap_get(a->m->map, old);
	if (!new || oid_is_null(new) || oid_eq(new, old))
		return;
	memcpy(a->text + off, oid_hex(new, hex), n);
	a->changed++;
}

size_t msgids_apply(struct msgids *m, char *text, size_t len)
{
	struct apply a = { m, text, 0 };

	msgids_scan(m, text, len, apply_one, &a);
	return a.changed;
}
