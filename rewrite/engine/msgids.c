/*
 * msgids.c - commit messages that name old commits (full ids, or
 * abbreviations of 7 hex digits and more) are rewritten to the new ids
 * through the commit map, as git-filter-repo does: an abbreviation is
 * replaced only when exactly one known old id starts with it, and keeps
 * its length.
 */
#include <stdlib.h>
#include <string.h>

#include "state.h"

#define ABBREV_MIN 7

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
	struct prefix_ent *byprefix;
	size_t indexed;		/* map entries indexed so far */
};

static uint32_t prefix_key(const char *hex)
{
	uint32_t k = 0;
	int i;

	for (i = 0; i < ABBREV_MIN; i++)
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

void msgids_free(struct rw *rw)
{
	struct prefix_ent *p, *t;

	if (!rw->msgids)
		return;
	HASH_ITER(hh, rw->msgids->byprefix, p, t) {
		HASH_DEL(rw->msgids->byprefix, p);
		free(p->olds);
		free(p);
	}
	free(rw->msgids);
	rw->msgids = NULL;
}

/* The new id for an abbreviation (or full id), or NULL when unknown,
 * ambiguous, or dropped. */
static const struct oid *lookup(struct rw *rw, const char *hex, size_t len)
{
	char full[OID_HEX + 1];
	const struct oid *found = NULL, *new;
	struct prefix_ent *p;
	uint32_t key = prefix_key(hex);
	size_t i;

	HASH_FIND(hh, rw->msgids->byprefix, &key, sizeof(key), p);
	if (!p)
		return NULL;
	for (i = 0; i < p->n; i++) {
		if (memcmp(oid_hex(&p->olds[i], full), hex, len))
			continue;
		if (found)
			return NULL; /* ambiguous: leave it */
		found = &p->olds[i];
	}
	if (!found)
		return NULL;
	/* a commit an earlier run dropped (40 zeros in the map) has no new
	 * id: its old one stays, as git-filter-repo leaves it */
	new = cmap_get(rw->cmap, found);
	return new && !oid_is_null(new) ? new : NULL;
}

int msgids_rewrite(struct rw *rw, struct buf *msg)
{
	char hex[OID_HEX + 1];
	size_t i = 0, changed = 0;

	if (!rw->msgids)
		rw->msgids = xcalloc(1, sizeof(*rw->msgids));
	/* the map grows as commits are written: index what is new */
	rw->msgids->indexed += cmap_each_from(rw->cmap, rw->msgids->indexed,
					      index_one, rw->msgids);
	while (i < msg->len) {
		size_t start = i, len;
		const struct oid *new;

		if (!is_hex(msg->ptr[i]) || (i > 0 && is_word(msg->ptr[i - 1]))) {
			i++;
			continue;
		}
		while (i < msg->len && is_hex(msg->ptr[i]))
			i++;
		len = i - start;
		if (len < ABBREV_MIN || len > OID_HEX ||
		    (i < msg->len && is_word(msg->ptr[i])))
			continue;
		new = lookup(rw, msg->ptr + start, len);
		if (!new)
			continue;
		memcpy(msg->ptr + start, oid_hex(new, hex), len);
		changed++;
	}
	return (int)changed;
}
