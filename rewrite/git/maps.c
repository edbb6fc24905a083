/* maps.c - commit map storage and formats, atomic writes; the lines of
 * the marks file and the ref map. */
#include "git.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>

struct cmap_ent {
	struct oid old, new;
	size_t seq;		/* recording order */
	UT_hash_handle hh;
};

struct cmap {
	struct cmap_ent *byold;
	size_t seq;
	struct cmap_ent **order;	/* by seq */
	size_t order_alloc;
};

int cmap_format_parse(const char *s, enum cmap_format *out)
{
	if (!strcmp(s, "filter-repo"))
		*out = CMAP_FILTER_REPO;
	else if (!strcmp(s, "lfs"))
		*out = CMAP_LFS;
	else if (!strcmp(s, "bfg"))
		*out = CMAP_BFG;
	else
		return -1;
	return 0;
}

struct cmap *cmap_new(void)
{
	return xcalloc(1, sizeof(struct cmap));
}

void cmap_free(struct cmap *m)
{
	struct cmap_ent *en, *tmp;

	if (!m)
		return;
	HASH_ITER(hh, m->byold, en, tmp) {
		HASH_DEL(m->byold, en);
		free(en);
	}
	free(m->order);
	free(m);
}

const struct oid *cmap_get(const struct cmap *m, const struct oid *old)
{
	struct cmap_ent *en;

	HASH_FIND(hh, m->byold, old->hash, OID_RAW, en);
	return en ? &en->new : NULL;
}

void cmap_put(struct cmap *m, const struct oid *old, const struct oid *new)
{
	struct cmap_ent *en;

	HASH_FIND(hh, m->byold, old->hash, OID_RAW, en);
	if (!en) {
		en = xcalloc(1, sizeof(*en));
		en->old = *old;
		en->seq = m->seq++;
		HASH_ADD(hh, m->byold, old.hash, OID_RAW, en);
		if (en->seq == m->order_alloc) {
			m->order_alloc = m->order_alloc ? 2 * m->order_alloc : 1024;
			m->order = xrealloc(m->order, m->order_alloc * sizeof(*m->order));
		}
		m->order[en->seq] = en;
	}
	en->new = *new;
}

size_t cmap_each_from(const struct cmap *m, size_t from,
		      int (*fn)(void *ctx, const struct oid *old,
				const struct oid *new),
		      void *ctx)
{
	size_t i;

	for (i = from; i < m->seq; i++)
		fn(ctx, &m->order[i]->old, &m->order[i]->new);
	return m->seq > from ? m->seq - from : 0;
}

size_t cmap_count(const struct cmap *m)
{
	return HASH_COUNT(m->byold);
}

/* One line: two 40-hex ids separated by a space or a comma; the
 * filter-repo header ("old ... new") is skipped. 1 entry, 0 skip, -1. */
static int parse_line(const char *line, size_t len, struct oid *old,
		      struct oid *new)
{
	if (len >= 3 && !memcmp(line, "old", 3))
		return 0;
	if (len == 0)
		return 0;
	if (len != 2 * OID_HEX + 1 || (line[OID_HEX] != ' ' && line[OID_HEX] != ','))
		return -1;
	if (oid_from_hex(old, line, OID_HEX) < 0 ||
	    oid_from_hex(new, line + OID_HEX + 1, OID_HEX) < 0)
		return -1;
	return 1;
}

int cmap_load(struct cmap *m, const char *path, struct err *e)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t lineno = 0;
	int ret = 0;

	if (!f) {
		if (errno == ENOENT)
			return 0;
		return err_errno(e, ERR_IO, "%s: cannot open commit map", path);
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		struct oid old, new;
		int r;

		lineno++;
		if (n && line[n - 1] == '\n')
			line[--n] = '\0';
		r = parse_line(line, (size_t)n, &old, &new);
		if (r < 0) {
			ret = err_set(e, ERR_USAGE,
				      "%s:%llu: expected '<old-id> <new-id>' "
				      "(40 hex digits each)",
				      path, (unsigned long long)lineno);
			break;
		}
		if (r > 0)
			cmap_put(m, &old, &new);
	}
	if (ret == 0 && ferror(f))
		ret = err_errno(e, ERR_IO, "%s: read error", path);
	free(line);
	fclose(f);
	return ret;
}

static int by_seq(const void *a, const void *b)
{
	const struct cmap_ent *x = *(const struct cmap_ent *const *)a;
	const struct cmap_ent *y = *(const struct cmap_ent *const *)b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_old(const void *a, const void *b)
{
	const struct cmap_ent *x = *(const struct cmap_ent *const *)a;
	const struct cmap_ent *y = *(const struct cmap_ent *const *)b;
	return memcmp(x->old.hash, y->old.hash, OID_RAW);
}

int cmap_format(const struct cmap *m, enum cmap_format fmt, struct buf *out)
{
	size_t n = HASH_COUNT(m->byold), i = 0;
	struct cmap_ent **all = xmalloc((n ? n : 1) * sizeof(*all));
	struct cmap_ent *en, *tmp;
	char a[OID_HEX + 1], b[OID_HEX + 1];
	int ret = 0;

	HASH_ITER(hh, m->byold, en, tmp)
		all[i++] = en;
	qsort(all, n, sizeof(*all), fmt == CMAP_BFG ? by_old : by_seq);
	if (fmt == CMAP_FILTER_REPO)
		ret |= buf_printf(out, "%-40s %s\n", "old", "new");
	for (i = 0; i < n && ret == 0; i++) {
		en = all[i];
		if (fmt == CMAP_LFS && oid_eq(&en->old, &en->new))
			continue;
		ret |= buf_printf(out, "%s%c%s\n", oid_hex(&en->old, a),
				  fmt == CMAP_LFS ? ',' : ' ', oid_hex(&en->new, b));
	}
	free(all);
	return ret;
}


void marks_line_format(struct buf *out, uint64_t mark, const struct oid *id)
{
	char hex[OID_HEX + 1];

	buf_printf(out, ":%llu %s\n", (unsigned long long)mark, oid_hex(id, hex));
}

int marks_line_parse(const char *line, size_t len, uint64_t *mark,
		     struct oid *id)
{
	const char *sp = memchr(line, ' ', len);

	if (len < 2 || line[0] != ':' || !sp || line + len - sp - 1 != OID_HEX)
		return -1;
	if (parse_u64(line + 1, (size_t)(sp - line - 1), UINT64_MAX, mark) < 0)
		return -1;
	return oid_from_hex(id, sp + 1, OID_HEX);
}

void refmap_line_format(struct buf *out, const struct oid *old,
			const struct oid *new, const char *ref)
{
	char h1[OID_HEX + 1], h2[OID_HEX + 1];

	buf_printf(out, "%s %s %s\n", oid_hex(old, h1), oid_hex(new, h2), ref);
}

int refmap_line_parse(const char *line, size_t len, struct refmap_line *r)
{
	if (len < 2 * OID_HEX + 3 || line[OID_HEX] != ' ' ||
	    line[2 * OID_HEX + 1] != ' ' ||
	    oid_from_hex(&r->old, line, OID_HEX) < 0 ||
	    oid_from_hex(&r->new, line + OID_HEX + 1, OID_HEX) < 0)
		return -1;
	r->ref = line + 2 * OID_HEX + 2;
	r->ref_len = len - 2 * OID_HEX - 2;
	return 0;
}
