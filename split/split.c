/*
 * split.c - record splitting with prefix/suffix reuse (see split.h).
 *
 * The cache holds the previous version (bytes and record index). A new
 * version is compared with it: p bytes of common prefix, s of common
 * suffix (p + s <= both lengths). Lines wholly inside the prefix or the
 * suffix have the same bytes, hence the same record-start status and key,
 * so only the records between
 *   a = the last record start on a line that ends before the line holding
 *       the first differing byte (0 when there is none: head included), and
 *   b = the first record start on a line wholly inside the suffix (the end
 *       when there is none)
 * are looked at again. Records before a keep their offsets, records from
 * b on shift by the length difference. Inside the middle, records equal
 * to old ones are reused (pairs, see parse_middle). A part none of whose
 * middle records changed is unchanged; a touched part is unchanged exactly
 * when the bytes of its old middle records equal those of its new ones
 * (its prefix and suffix records being the same on both sides).
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <assert.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "split/split.h"

#define HEAD_PART 0u		/* parts[0] is the head, never in the table */
#define NONE ((size_t)-1)
#define MAX_PARTS (UINT32_MAX - 1)

/* ---- growing arrays ---- */

/* Makes room for need elements of size elem; dies like xmalloc. */
static void grow(void *pp, size_t *cap, size_t need, size_t elem)
{
	void **p = pp;
	size_t n = *cap ? *cap : 16, bytes;

	if (need <= *cap)
		return;
	while (n < need)
		if (size_mul(n, 2, &n) < 0)
			n = need;
	if (size_mul(n, elem, &bytes) < 0) {
		die("split: allocation size overflow");
	}
	*p = xrealloc(*p, bytes);
	*cap = n;
}

/* ---- the spec ---- */

struct seg {
	size_t off, len;	/* literal: into[off .. off+len) */
	uint32_t group;		/* > 0: a placeholder for this group */
};

struct split_spec {
	pcre2_code *re;
	char *into;
	size_t into_len;
	struct seg *segs;
	size_t nsegs, segcap;
	size_t dir_len;		/* fixed directory prefix, with its '/' */
	char *head;		/* NULL when there is no head= */
	size_t head_len;
};

/*
 * 1 when a path component is a name git's fsck refuses or that changes
 * how git or git-lfs read the tree, in any case and under the aliases
 * NTFS and HFS+ give it: .git (also "git~1", trailing dots or spaces, an
 * NTFS stream suffix ":..." and HFS+ ignorable code points), .gitmodules,
 * .gitattributes, .gitignore, .mailmap, .lfsconfig (and their NTFS short
 * names).
 */
static int name_reserved(const char *c, size_t n)
{
	static const char *const dotted[] = { "git", "gitmodules", "gitattributes",
					      "gitignore", "mailmap", "lfsconfig" };
	static const char *const shorts[] = { "git~", "gitmod~", "gi7eba~",
					      "gitatt~", "gi7d29~", "gitign~",
					      "gi250a~", "mailma~", "maba30~",
					      "lfscon~" };
	/* whole: ".git" with 60 trailing dots, or "git~" and 80 digits,
	 * are reserved too (callers refuse longer components first) */
	char name[SPLIT_MAX_NAME + 1];
	size_t i, k = 0;

	if (n > SPLIT_MAX_NAME)
		return 0;
	for (i = 0; i < n; i++) {
		const unsigned char *u = (const unsigned char *)c + i;
		/* HFS+ ignores U+200C..U+200F, U+202A..U+202E, U+206A..U+206F
		 * and U+FEFF */
		if (i + 2 < n && u[0] == 0xe2 && u[1] == 0x80 &&
		    ((u[2] >= 0x8c && u[2] <= 0x8f) || (u[2] >= 0xaa && u[2] <= 0xae))) {
			i += 2;
			continue;
		}
		if (i + 2 < n && u[0] == 0xe2 && u[1] == 0x81 && u[2] >= 0xaa &&
		    u[2] <= 0xaf) {
			i += 2;
			continue;
		}
		if (i + 2 < n && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf) {
			i += 2;
			continue;
		}
		if (u[0] == ':')
			break;	/* NTFS: name:stream */
		name[k++] = (char)(u[0] >= 'A' && u[0] <= 'Z' ? u[0] + 32 : u[0]);
	}
	while (k > 0 && (name[k - 1] == '.' || name[k - 1] == ' '))
		k--;		/* NTFS drops trailing dots and spaces */
	name[k] = '\0';
	for (i = 0; i < sizeof(dotted) / sizeof(dotted[0]); i++)
		if (name[0] == '.' && !strcmp(name + 1, dotted[i]))
			return 1;
	for (i = 0; i < sizeof(shorts) / sizeof(shorts[0]); i++) {
		size_t l = strlen(shorts[i]);
		if (k > l && !strncmp(name, shorts[i], l) &&
		    strspn(name + l, "0123456789") == k - l)
			return 1;
	}
	return 0;
}

/* NULL when p is a valid relative path, else what is wrong with it. */
static const char *path_problem(const char *p, size_t len)
{
	size_t i = 0;

	if (len == 0)
		return "is empty";
	if (len > SPLIT_MAX_PATH)
		return "is too long";
	if (memchr(p, '\0', len))
		return "contains NUL";
	if (memchr(p, '\n', len))
		return "contains a newline";
	for (;;) {
		const char *slash = memchr(p + i, '/', len - i);
		size_t end = slash ? (size_t)(slash - p) : len, n = end - i;

		if (n == 0)
			return "has an empty component";
		if (n == 1 && p[i] == '.')
			return "has a '.' component";
		if (n == 2 && p[i] == '.' && p[i + 1] == '.')
			return "has a '..' component";
		if (n > SPLIT_MAX_NAME)
			return "has a component longer than 255 bytes";
		if (name_reserved(p + i, n))
			return "has a name git refuses or reads specially (.git, "
			       ".gitmodules, .gitattributes, ... or an alias)";
		if (!slash)
			return NULL;
		i = end + 1;
	}
}

static int is_name_char(char ch, int first)
{
	return ch == '_' || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z') || (!first && ch >= '0' && ch <= '9');
}

/* The group a placeholder's text (between the braces) names. */
static int placeholder_group(const struct split_spec *s, const char *t,
			     size_t n, uint32_t *out, struct err *e)
{
	uint32_t count = 0;
	uint64_t num;
	char name[64];
	int rc;
	size_t i;

	pcre2_pattern_info(s->re, PCRE2_INFO_CAPTURECOUNT, &count);
	if (n > 0 && t[0] >= '0' && t[0] <= '9') {
		if (parse_u64(t, n, UINT32_MAX, &num) < 0 || num == 0 ||
		    num > count)
			return err_set(e, ERR_USAGE,
				       "into=: {%.*s} is not a capture group of "
				       "record= (it has %u)",
				       (int)n, t, (unsigned)count);
		*out = (uint32_t)num;
		return 0;
	}
	for (i = 0; i < n; i++)
		if (!is_name_char(t[i], i == 0))
			break;
	if (n == 0 || i < n || n >= sizeof(name))
		return err_set(e, ERR_USAGE,
			       "into=: {%.*s} is neither a group number nor a "
			       "group name",
			       (int)(n > 60 ? 60 : n), t);
	memcpy(name, t, n);
	name[n] = '\0';
	rc = pcre2_substring_number_from_name(s->re, (PCRE2_SPTR)name);
	if (rc > 0) {
		*out = (uint32_t)rc;
		return 0;
	}
	if (rc == PCRE2_ERROR_NOSUBSTRING && !strcmp(name, "key") &&
	    count >= 1) {
		*out = 1;	/* {key}: the first group, as docs/DESIGN.md uses it */
		return 0;
	}
	if (rc == PCRE2_ERROR_NOUNIQUESUBSTRING)
		return err_set(e, ERR_USAGE,
			       "into=: group name {%s} is not unique", name);
	return err_set(e, ERR_USAGE,
		       "into=: {%s} is not a named group of record=", name);
}

static void add_seg(struct split_spec *s, size_t off, size_t len,
		    uint32_t group)
{
	if (!group && !len)
		return;
	grow(&s->segs, &s->segcap, s->nsegs + 1, sizeof(*s->segs));
	s->segs[s->nsegs++] = (struct seg){ off, len, group };
}

static int parse_template(struct split_spec *s, struct err *e)
{
	const char *t = s->into;
	size_t i = 0, lit = 0, n = s->into_len, first_brace = NONE;

	while (i < n) {
		const char *close;

		if (t[i] == '}')
			return err_set(e, ERR_USAGE,
				       "into=: '}' without '{' at column %zu",
				       i + 1);
		if (t[i] != '{') {
			i++;
			continue;
		}
		close = memchr(t + i + 1, '}', n - i - 1);
		if (!close)
			return err_set(e, ERR_USAGE,
				       "into=: '{' at column %zu is not closed",
				       i + 1);
		if (memchr(t + i + 1, '{', (size_t)(close - t) - i - 1))
			return err_set(e, ERR_USAGE,
				       "into=: '{' inside a placeholder after "
				       "column %zu",
				       i + 1);
		{
			uint32_t g = 0;
			size_t end = (size_t)(close - t);

			if (placeholder_group(s, t + i + 1, end - i - 1, &g,
					      e) < 0)
				return -1;
			if (first_brace == NONE)
				first_brace = i;
			add_seg(s, lit, i - lit, 0);
			add_seg(s, 0, 0, g);
			i = lit = end + 1;
		}
	}
	add_seg(s, lit, n - lit, 0);
	if (first_brace == NONE)
		return err_set(e, ERR_USAGE,
			       "into=: no {...} placeholder (every record would "
			       "go to one part)");
	for (i = first_brace; i > 0 && t[i - 1] != '/'; i--)
		;
	s->dir_len = i;
	return 0;
}

/* Checks the template's shape with every placeholder as "x". */
static int check_template_shape(const struct split_spec *s, struct err *e)
{
	struct buf b = BUF_INIT(SPLIT_MAX_PATH + 64);
	const char *why;
	size_t i;

	for (i = 0; i < s->nsegs; i++)
		if (buf_add(&b, s->segs[i].group ? "x" : s->into + s->segs[i].off,
			    s->segs[i].group ? 1 : s->segs[i].len) < 0) {
			buf_release(&b);
			return err_set(e, ERR_USAGE, "into=: path is too long");
		}
	why = path_problem(b.ptr, b.len);
	buf_release(&b);
	if (why)
		return err_set(e, ERR_USAGE, "into=: the path template %s",
			       why);
	return 0;
}

static int compile_record(struct split_spec *s, const char *record,
			  struct err *e)
{
	int code;
	PCRE2_SIZE at;
	PCRE2_UCHAR msg[256];

	s->re = pcre2_compile((PCRE2_SPTR)record, PCRE2_ZERO_TERMINATED, 0,
			      &code, &at, NULL);
	if (!s->re) {
		pcre2_get_error_message(code, msg, sizeof(msg));
		return err_set(e, ERR_USAGE,
			       "record=: bad pattern at offset %zu: %s",
			       (size_t)at, (const char *)msg);
	}
	/* JIT when the platform has it; without, the interpreter runs. */
	pcre2_jit_compile(s->re, PCRE2_JIT_COMPLETE);
	return 0;
}

int split_spec_new(struct split_spec **out, const char *record,
		   const char *into, const char *head, struct err *e)
{
	struct split_spec *s = xcalloc(1, sizeof(*s));
	const char *why;

	s->into = xstrdup(into);
	s->into_len = strlen(into);
	if (compile_record(s, record, e) < 0 || parse_template(s, e) < 0 ||
	    check_template_shape(s, e) < 0)
		goto fail;
	if (head) {
		s->head_len = strlen(head);
		why = path_problem(head, s->head_len);
		if (why) {
			err_set(e, ERR_USAGE, "head=: the path %s", why);
			goto fail;
		}
		s->head = xstrdup(head);
	}
	*out = s;
	return 0;
fail:
	split_spec_free(s);
	return -1;
}

void split_spec_free(struct split_spec *s)
{
	if (!s)
		return;
	pcre2_code_free(s->re);
	free(s->into);
	free(s->segs);
	free(s->head);
	free(s);
}

/* ---- the cache ---- */

struct rec {
	size_t off;		/* in the version; the length runs to the next */
	uint32_t part;
};

/* A maximal stretch of consecutive records of one part. */
struct stretch {
	size_t rec;		/* its first record */
	uint32_t part;
};

struct part {
	/* what every result reads first, in one cache line */
	char *path;		/* NUL-terminated, owned (borrowed for head) */
	size_t path_len;
	uint64_t touch;		/* the scratch below is valid while == stamp */
	int unchanged;
	size_t nrec;		/* records in the cached version */
	/* scratch of one split_run */
	size_t old_first, old_last, new_first, new_last;
	size_t old_bytes, new_bytes;
	/* scratch of the result walk, valid while seen == cache->stamp */
	uint64_t seen;
	size_t nruns, out, fill;
};

struct split_result {
	struct split_cache *owner;
	int built;		/* parts/ranges list every part of this run */
	struct split_part *parts;
	size_t n, cap;
	struct split_range *ranges;
	size_t rcap;
	int reassembles;
	/* what changed, always listed: new or changed parts (copies, ranges
	 * in chg_ranges or in ranges), ids of the parts that vanished */
	struct split_part *chg;
	size_t nchg, chgcap;
	struct split_range *chg_ranges;
	size_t chgrcap;
	uint32_t *gone;
	size_t ngone, gonecap;
};

struct split_cache {
	const struct split_spec *spec;
	pcre2_match_data *md;

	/* The cached version lives at mem[base .. base+len). */
	char *mem;
	size_t cap, base, len;
	int valid;

	struct rec *recs;	/* sorted by offset; a head is recs[0] */
	size_t nrec, reccap;

	struct part *parts;	/* index = part id; 0 is the head */
	size_t nparts, partcap;
	size_t live;		/* parts with records in the cached version */
	uint32_t *table;	/* path -> id + 1, open addressing, 0 free */
	size_t tcap;

	uint64_t stamp;

	/* scratch */
	struct rec *mid;	/* records of the re-parsed middle */
	size_t nmid, midcap;
	size_t *old_next, *new_next;
	size_t oncap, nncap;
	uint32_t *touched;
	size_t ntouched, touchcap;
	uint64_t *tbits;	/* bit per part id: touched in this run */
	size_t tbitcap;
	/* whole old records reused by the middle, in order: old record
	 * ia + pair_old[k] is new record pair_new[k] (same bytes, part) */
	size_t *pair_old, *pair_new;
	size_t npair, pocap, pncap;
	struct stretch *runs;	/* cover recs, kept up to date like them */
	size_t nruns, runcap;
	struct stretch *tmp;
	size_t ntmp, tmpcap;
	uint32_t *order;
	size_t ordercap;
	struct buf path;

	struct split_result res;
	int had_prev;		/* of the last run, for the lazy listing */
	struct split_stats stats;
};

static uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return h;
}

static void table_put(uint32_t *t, size_t cap, uint64_t h, uint32_t id)
{
	size_t i = (size_t)h & (cap - 1);

	while (t[i])
		i = (i + 1) & (cap - 1);
	t[i] = id + 1;
}

static void table_grow(struct split_cache *c)
{
	size_t ncap = c->tcap ? c->tcap * 2 : 1024, i, bytes;
	uint32_t *t;

	if (size_mul(ncap, sizeof(*t), &bytes) < 0)
		abort();
	t = xcalloc(ncap, sizeof(*t));
	for (i = 1; i < c->nparts; i++)
		table_put(t, ncap,
			  hash_bytes(c->parts[i].path, c->parts[i].path_len),
			  (uint32_t)i);
	free(c->table);
	c->table = t;
	c->tcap = ncap;
}

/* The id of path, or NONE. */
static size_t part_find(const struct split_cache *c, const char *p, size_t n,
			uint64_t h)
{
	size_t i;

	if (!c->tcap)
		return NONE;
	for (i = (size_t)h & (c->tcap - 1); c->table[i];
	     i = (i + 1) & (c->tcap - 1)) {
		const struct part *x = &c->parts[c->table[i] - 1];

		if (x->path_len == n && !memcmp(x->path, p, n))
			return c->table[i] - 1;
	}
	return NONE;
}

static uint32_t part_add(struct split_cache *c, const char *p, size_t n,
			 uint64_t h)
{
	struct part *x;

	if ((c->nparts + 1) * 2 > c->tcap)
		table_grow(c);
	grow(&c->parts, &c->partcap, c->nparts + 1, sizeof(*c->parts));
	x = &c->parts[c->nparts];
	memset(x, 0, sizeof(*x));
	x->path = xmemdup(p, n);
	x->path_len = n;
	table_put(c->table, c->tcap, h, (uint32_t)c->nparts);
	return (uint32_t)c->nparts++;
}

struct split_cache *split_cache_new(const struct split_spec *spec)
{
	struct split_cache *c = xcalloc(1, sizeof(*c));

	c->spec = spec;
	c->md = pcre2_match_data_create_from_pattern(spec->re, NULL);
	if (!c->md)
		die("split: out of memory");
	grow(&c->parts, &c->partcap, 1, sizeof(*c->parts));
	memset(&c->parts[0], 0, sizeof(c->parts[0]));
	c->parts[0].path = spec->head;	/* borrowed; NULL without head= */
	c->parts[0].path_len = spec->head_len;
	c->nparts = 1;
	/* Never NULL, so that offsets into them are defined even when empty. */
	grow(&c->recs, &c->reccap, 1, sizeof(*c->recs));
	grow(&c->mid, &c->midcap, 1, sizeof(*c->mid));
	grow(&c->runs, &c->runcap, 1, sizeof(*c->runs));
	buf_init(&c->path, SPLIT_MAX_PATH);
	c->res.owner = c;
	return c;
}

void split_cache_reset(struct split_cache *c)
{
	size_t i;

	for (i = 0; i < c->nparts; i++)
		c->parts[i].nrec = 0;
	c->live = 0;
	c->valid = 0;
	c->len = 0;
	c->nrec = 0;
	c->nruns = 0;
	c->res.n = 0;
	c->res.built = 1;
	c->res.nchg = c->res.ngone = 0;
	c->res.reassembles = 1;
	memset(&c->stats, 0, sizeof(c->stats));
}

void split_cache_free(struct split_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 1; i < c->nparts; i++)
		free(c->parts[i].path);
	pcre2_match_data_free(c->md);
	free(c->mem);
	free(c->recs);
	free(c->parts);
	free(c->table);
	free(c->mid);
	free(c->old_next);
	free(c->new_next);
	free(c->touched);
	free(c->tbits);
	free(c->pair_old);
	free(c->pair_new);
	free(c->runs);
	free(c->tmp);
	free(c->order);
	buf_release(&c->path);
	free(c->res.parts);
	free(c->res.ranges);
	free(c->res.chg);
	free(c->res.chg_ranges);
	free(c->res.gone);
	free(c);
}

/* ---- finding the changed middle ---- */

/* Length of the common prefix of x and y (n bytes each at most). */
static size_t common_prefix(const char *x, const char *y, size_t n)
{
	size_t i = 0;

	while (n - i >= 4096 && !memcmp(x + i, y + i, 4096))
		i += 4096;
	while (n - i >= 64 && !memcmp(x + i, y + i, 64))
		i += 64;
	while (i < n && x[i] == y[i])
		i++;
	return i;
}

/* Length of the common suffix of x[..xe) and y[..ye), at most n. */
static size_t common_suffix(const char *xe, const char *ye, size_t n)
{
	size_t i = 0;

	while (n - i >= 4096 && !memcmp(xe - i - 4096, ye - i - 4096, 4096))
		i += 4096;
	while (n - i >= 64 && !memcmp(xe - i - 64, ye - i - 64, 64))
		i += 64;
	while (i < n && xe[-(ptrdiff_t)i - 1] == ye[-(ptrdiff_t)i - 1])
		i++;
	return i;
}

/* How many records start before off. */
static size_t recs_before(const struct split_cache *c, size_t off)
{
	size_t lo = 0, hi = c->nrec;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->recs[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The cached version's bytes; NULL before the first version. */
static const char *cached(const struct split_cache *c)
{
	return c->mem ? c->mem + c->base : NULL;
}

struct middle {
	size_t a;		/* first re-parsed byte, both versions */
	size_t ia, ib;		/* old records [ia, ib) are replaced */
	size_t b_old, b_new;	/* end of the middle in each version */
};

static void find_middle(const struct split_cache *c, size_t p, size_t s,
			size_t ln, struct middle *m)
{
	const char *old = cached(c);
	size_t lo = c->len, line_start = 0, k;

	if (p > 0) {
		const char *nl = memrchr(old, '\n', p);

		line_start = nl ? (size_t)(nl - old) + 1 : 0;
	}
	/* The last record starting before the line that holds byte p. */
	k = recs_before(c, line_start);
	if (k > 0 && c->recs[k - 1].part != HEAD_PART) {
		m->ia = k - 1;
		m->a = c->recs[k - 1].off;
	} else {
		m->ia = 0;
		m->a = 0;
	}
	/* The first record starting on a line wholly inside the suffix. */
	m->ib = c->nrec;
	m->b_old = lo;
	if (s > 0) {
		const char *nl = memchr(old + lo - s, '\n', s);

		if (nl) {
			k = recs_before(c, (size_t)(nl - old) + 1);
			if (k < c->nrec) {
				m->ib = k;
				m->b_old = c->recs[k].off;
			}
		}
	}
	m->b_new = ln - (lo - m->b_old);	/* lo - b_old <= s <= ln */
}

/* ---- matching the middle ---- */

static size_t line_number(const char *d, size_t pos)
{
	size_t n = 1;
	const char *p = d, *end = d + pos;

	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		n++;
		p++;
	}
	return n;
}

/* Writes a quoted, escaped, possibly shortened copy of k into out. */
static void quote_key(char *out, size_t cap, const char *k, size_t n)
{
	size_t o = 0, i;

	assert(cap >= 16);
	out[o++] = '"';
	for (i = 0; i < n && o + 8 < cap; i++) {
		unsigned char ch = (unsigned char)k[i];

		if (ch == '"' || ch == '\\')
			o += (size_t)snprintf(out + o, cap - o, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
		else
			out[o++] = (char)ch;
	}
	if (i < n)
		o += (size_t)snprintf(out + o, cap - o, "...");
	out[o++] = '"';
	out[o] = '\0';
}

static int key_error(const char *d, size_t pos, const char *k, size_t n,
		     const char *what, struct err *e)
{
	char q[160];

	quote_key(q, sizeof(q), k, n);
	return err_set(e, ERR_STREAM, "line %zu: key %s %s",
		       line_number(d, pos), q, what);
}

/* NULL when a substituted group value k is acceptable. */
static const char *key_problem(const char *k, size_t n)
{
	if (n == 0)
		return "is empty";
	if (memchr(k, '/', n))
		return "contains '/'";
	if (memchr(k, '\0', n))
		return "contains NUL";
	if (memchr(k, '\n', n))
		return "contains a newline";
	if (n == 2 && k[0] == '.' && k[1] == '.')
		return "is '..'";
	if (n > SPLIT_MAX_NAME)
		return "is longer than 255 bytes";
	if (name_reserved(k, n))
		return "is a name git refuses or reads specially (.git, "
		       ".gitmodules, .gitattributes, ... or an alias)";
	return NULL;
}

/* A new part for path (in c->path), after checking it. */
static int new_part(struct split_cache *c, const char *d, size_t pos,
		    uint64_t h, uint32_t *out, struct err *e)
{
	const struct split_spec *s = c->spec;
	const char *why = path_problem(c->path.ptr, c->path.len);
	char q[160];

	if (!why && (c->path.len < s->dir_len ||
		     memcmp(c->path.ptr, s->into, s->dir_len)))
		why = "is outside the template's directory";
	if (!why && s->head && c->path.len == s->head_len &&
	    !memcmp(c->path.ptr, s->head, s->head_len))
		why = "is the head path";
	if (!why && c->nparts >= MAX_PARTS)
		why = "is one part too many";
	if (why) {
		quote_key(q, sizeof(q), c->path.ptr, c->path.len);
		return err_set(e, ERR_STREAM, "line %zu: part path %s %s",
			       line_number(d, pos), q, why);
	}
	*out = part_add(c, c->path.ptr, c->path.len, h);
	return 0;
}

/* The part of the record whose start line at d+pos just matched. */
static int record_part(struct split_cache *c, const char *d, size_t pos,
		       uint32_t *out, struct err *e)
{
	const struct split_spec *s = c->spec;
	const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(c->md);
	const char *line = d + pos;
	uint64_t h;
	size_t i, id;

	buf_reset(&c->path);
	for (i = 0; i < s->nsegs; i++) {
		const struct seg *g = &s->segs[i];
		const char *k = s->into + g->off, *why;
		size_t n = g->len;

		if (g->group) {
			PCRE2_SIZE b = ov[2 * g->group], t = ov[2 * g->group + 1];

			if (b == PCRE2_UNSET || t < b)
				b = t = 0;	/* unset: an empty key */
			k = line + b;
			n = t - b;
			why = key_problem(k, n);
			if (why)
				return key_error(d, pos, k, n, why, e);
		}
		if (buf_add(&c->path, k, n) < 0)
			return key_error(d, pos, k, n,
					 "makes the part path too long", e);
	}
	h = hash_bytes(c->path.ptr, c->path.len);
	id = part_find(c, c->path.ptr, c->path.len, h);
	if (id != NONE) {
		*out = (uint32_t)id;
		return 0;
	}
	return new_part(c, d, pos, h, out, e);
}

static void mid_push(struct split_cache *c, size_t off, uint32_t part)
{
	grow(&c->mid, &c->midcap, c->nmid + 1, sizeof(*c->mid));
	c->mid[c->nmid++] = (struct rec){ off, part };
}

static int head_error(const char *d, size_t end, struct err *e)
{
	size_t lines = line_number(d, end) - 1;

	if (end > 0 && d[end - 1] != '\n')
		lines++;
	return err_set(e, ERR_STREAM,
		       "%zu line(s) before the first record and no head= part",
		       lines);
}

/*
 * Reuse of the old middle's records. A line's status (record start or
 * not) and a start line's key depend on the line's bytes only, so a new
 * line equal to the start line of an old record is a record start of
 * that record's part, and new bytes equal to a whole old record are that
 * record again: no pattern, key or part lookup. The old records are
 * searched forward from the last one reused, HINT_WINDOW at a time, so
 * records edited, inserted or deleted between unchanged ones cost a
 * pattern match per line, and the unchanged ones a memcmp.
 */
#define HINT_WINDOW 64

struct hints {
	const char *od;		/* the old version */
	size_t olen;
	size_t ia, j, ib;	/* old records [j, ib) may still be reused */
	size_t pend;		/* the old record the last new one may equal */
};

/* Length of old record k (k < nrec). */
static size_t rec_len(const struct split_cache *c, size_t k, size_t olen)
{
	return (k + 1 < c->nrec ? c->recs[k + 1].off : olen) - c->recs[k].off;
}

/*
 * Whether d[pos .. b) starts with old record k, whole: the same bytes,
 * ending with a newline or at the end of both the middle and the old
 * version (a last line without one).
 */
static int hint_whole(const struct split_cache *c, const struct hints *h,
		      size_t k, const char *d, size_t pos, size_t b)
{
	size_t off = c->recs[k].off, n = rec_len(c, k, h->olen);

	if (c->recs[k].part == HEAD_PART || n > b - pos ||
	    memcmp(h->od + off, d + pos, n))
		return 0;
	return h->od[off + n - 1] == '\n' ||
	       (pos + n == b && off + n == h->olen);
}

/* The old record in [j, j + HINT_WINDOW) whose start line is line[0..n),
 * or NONE. */
static size_t hint_find(const struct split_cache *c, const struct hints *h,
			const char *line, size_t n)
{
	size_t k, end = h->ib - h->j > HINT_WINDOW ? h->j + HINT_WINDOW : h->ib;

	for (k = h->j; k < end; k++) {
		size_t off = c->recs[k].off;

		if (c->recs[k].part != HEAD_PART && h->olen - off >= n &&
		    !memcmp(h->od + off, line, n) &&
		    (off + n == h->olen || h->od[off + n] == '\n'))
			return k;
	}
	return NONE;
}

/*
 * Records old record k's part for the record at pos; returns the bytes to
 * skip: the record's length when it starts with k's whole, else 0. The
 * new record is then the same as k only if a record starts right after
 * it (the old record ended because one did; in the new version the next
 * line may continue it): when the next line is known, pair_confirm makes
 * the two a pair, or parse_middle drops the candidate.
 */
static size_t hint_take(struct split_cache *c, struct hints *h, size_t k,
			size_t pos, int whole)
{
	size_t n = whole ? rec_len(c, k, h->olen) : 0;

	mid_push(c, pos, c->recs[k].part);
	c->stats.reused_records++;
	c->stats.skipped_bytes += n;
	h->j = k + 1;
	if (whole)
		h->pend = k;
	return n;
}

/* The record taken whole last is followed by a record start (or the end
 * of the middle): it is a pair. */
static void pair_confirm(struct split_cache *c, struct hints *h)
{
	if (h->pend == NONE)
		return;
	grow(&c->pair_old, &c->pocap, c->npair + 1, sizeof(size_t));
	grow(&c->pair_new, &c->pncap, c->npair + 1, sizeof(size_t));
	c->pair_old[c->npair] = h->pend - h->ia;
	c->pair_new[c->npair++] = c->nmid - 1;
	h->pend = NONE;
}

/* Matches the lines of d[a .. b) into c->mid, reusing old records of the
 * middle [ia, ib) where the bytes allow. */
static int parse_middle(struct split_cache *c, const char *d, size_t a,
			size_t b, const struct middle *m, struct err *e)
{
	struct hints h = { cached(c), c->len, m->ia, m->ia, m->ib, NONE };
	size_t pos = a;
	uint32_t part = 0;
	int aligned = 1, rc;

	c->nmid = 0;
	c->npair = 0;
	while (pos < b) {
		const char *nl;
		size_t n, k;

		if (aligned && h.j < h.ib && hint_whole(c, &h, h.j, d, pos, b)) {
			pair_confirm(c, &h);
			pos += hint_take(c, &h, h.j, pos, 1);
			continue;
		}
		aligned = 0;
		nl = memchr(d + pos, '\n', b - pos);
		n = nl ? (size_t)(nl - d) - pos : b - pos;
		c->stats.regex_lines++;
		rc = pcre2_match(c->spec->re, (PCRE2_SPTR)(d + pos), n, 0, 0,
				 c->md, NULL);
		if (rc >= 0) {
			if (c->nmid == 1 && c->mid[0].part == HEAD_PART &&
			    !c->spec->head)
				return head_error(d, pos, e);
			pair_confirm(c, &h);
			k = hint_find(c, &h, d + pos, n);
			if (k == NONE) {
				if (record_part(c, d, pos, &part, e) < 0)
					return -1;
				mid_push(c, pos, part);
			} else if (hint_whole(c, &h, k, d, pos, b)) {
				pos += hint_take(c, &h, k, pos, 1);
				aligned = 1;
				continue;
			} else {
				hint_take(c, &h, k, pos, 0);
			}
		} else if (rc != PCRE2_ERROR_NOMATCH) {
			PCRE2_UCHAR msg[256];

			pcre2_get_error_message(rc, msg, sizeof(msg));
			return err_set(e, ERR_STREAM, "line %zu: record=: %s",
				       line_number(d, pos), (const char *)msg);
		} else if (pos == 0) {
			mid_push(c, 0, HEAD_PART);
		} else {
			h.pend = NONE;	/* the line continues the record */
		}
		/* A re-parse from a > 0 starts on a known record start. */
		assert(pos != a || a == 0 || rc >= 0);
		pos = nl ? pos + n + 1 : b;
	}
	pair_confirm(c, &h);	/* the middle ends on a record start */
	if (c->nmid == 1 && c->mid[0].part == HEAD_PART && !c->spec->head)
		return head_error(d, b, e);
	return 0;
}

/* ---- which parts changed ---- */

/*
 * The parts a run touches are those of the records of the middle that
 * were not reused whole (pairs): a part whose middle records were all
 * reused has the same bytes. A touched part's chains hold all its middle
 * records, reused or not, so that comparing them is exact; the reused
 * records of untouched parts are passed over with a bit test, without
 * reading their part.
 */
static int is_touched(const struct split_cache *c, uint32_t id)
{
	return (int)((c->tbits[id / 64] >> (id % 64)) & 1);
}

static void touch(struct split_cache *c, uint32_t id)
{
	struct part *x = &c->parts[id];

	if (is_touched(c, id))
		return;
	c->tbits[id / 64] |= (uint64_t)1 << (id % 64);
	x->touch = c->stamp;
	x->old_first = x->old_last = x->new_first = x->new_last = NONE;
	x->old_bytes = x->new_bytes = 0;
	grow(&c->touched, &c->touchcap, c->ntouched + 1, sizeof(*c->touched));
	c->touched[c->ntouched++] = id;
}

/* Room for a bit per part, the new ones clear. */
static void tbits_fit(struct split_cache *c)
{
	size_t need = c->nparts / 64 + 1, old = c->tbitcap;

	if (need <= old)
		return;
	grow(&c->tbits, &c->tbitcap, need, sizeof(*c->tbits));
	memset(c->tbits + old, 0, (c->tbitcap - old) * sizeof(*c->tbits));
}

/* Whether record i of one side of the middle was reused whole: pairs is
 * that side's list (ascending), *p a cursor into it that moves past i. */
static int is_paired(const struct split_cache *c, const size_t *pairs,
		     size_t *p, size_t i)
{
	if (*p < c->npair && pairs[*p] == i) {
		++*p;
		return 1;
	}
	return 0;
}

/* Touches the parts of the records of one side that were not reused;
 * pairs lists the reused ones, ascending. */
static void touch_side(struct split_cache *c, const struct rec *r, size_t n,
		       const size_t *pairs)
{
	size_t i, p = 0;

	for (i = 0; i < n; i++)
		if (!is_paired(c, pairs, &p, i))
			touch(c, r[i].part);
}

/* Chains the records of touched parts on one side of the middle. */
static void link_side(struct split_cache *c, const struct rec *r, size_t n,
		      size_t end, size_t *next, int is_new,
		      const size_t *pairs)
{
	size_t i, p = 0;

	for (i = 0; i < n; i++) {
		struct part *x;
		size_t len = (i + 1 < n ? r[i + 1].off : end) - r[i].off;
		size_t *first, *last;

		if (is_paired(c, pairs, &p, i) && !is_touched(c, r[i].part))
			continue;
		x = &c->parts[r[i].part];
		first = is_new ? &x->new_first : &x->old_first;
		last = is_new ? &x->new_last : &x->old_last;
		if (*last == NONE)
			*first = i;
		else
			next[*last] = i;
		*last = i;
		next[i] = NONE;
		if (is_new)
			x->new_bytes += len;
		else
			x->old_bytes += len;
	}
}

struct cursor {
	const char *d;
	const struct rec *r;
	const size_t *next;
	size_t n, end, i, at;	/* record i, byte at inside it */
};

static size_t cursor_span(const struct cursor *k, const char **p)
{
	size_t off = k->r[k->i].off;
	size_t len = (k->i + 1 < k->n ? k->r[k->i + 1].off : k->end) - off;

	*p = k->d + off + k->at;
	return len - k->at;
}

static void cursor_skip(struct cursor *k, size_t by, size_t span)
{
	if (by == span) {
		k->i = k->next[k->i];
		k->at = 0;
	} else {
		k->at += by;
	}
}

/* Whether two chains of records hold the same bytes (same total given). */
static int chains_equal(struct cursor *x, struct cursor *y)
{
	while (x->i != NONE && y->i != NONE) {
		const char *px, *py;
		size_t sx = cursor_span(x, &px), sy = cursor_span(y, &py);
		size_t n = sx < sy ? sx : sy;

		if (memcmp(px, py, n))
			return 0;
		cursor_skip(x, n, sx);
		cursor_skip(y, n, sy);
	}
	return x->i == NONE && y->i == NONE;
}

/*
 * Sets `unchanged` on every part the middle touches: it had records
 * before and its old middle bytes equal its new middle bytes.
 */
static void mark_changes(struct split_cache *c, const char *nd,
			 const struct middle *m)
{
	const char *od = cached(c);
	size_t nold = m->ib - m->ia, i;

	grow(&c->old_next, &c->oncap, nold + 1, sizeof(size_t));
	grow(&c->new_next, &c->nncap, c->nmid + 1, sizeof(size_t));
	tbits_fit(c);
	c->ntouched = 0;
	touch_side(c, c->recs + m->ia, nold, c->pair_old);
	touch_side(c, c->mid, c->nmid, c->pair_new);
	link_side(c, c->recs + m->ia, nold, m->b_old, c->old_next, 0,
		  c->pair_old);
	link_side(c, c->mid, c->nmid, m->b_new, c->new_next, 1, c->pair_new);
	for (i = 0; i < c->ntouched; i++) {
		struct part *x = &c->parts[c->touched[i]];
		struct cursor ox = { od, c->recs + m->ia, c->old_next, nold,
				     m->b_old, x->old_first, 0 };
		struct cursor nx = { nd, c->mid, c->new_next, c->nmid,
				     m->b_new, x->new_first, 0 };

		x->unchanged = c->valid && x->nrec > 0 &&
			       x->old_bytes == x->new_bytes &&
			       chains_equal(&ox, &nx);
	}
	for (i = 0; i < c->ntouched; i++)	/* clear for the next run */
		c->tbits[c->touched[i] / 64] = 0;
}

/* ---- updating the cached version ---- */

/* Appends a run for record rec unless the last one has the same part. */
static void tmp_push(struct split_cache *c, size_t rec, uint32_t part)
{
	if (c->ntmp && c->tmp[c->ntmp - 1].part == part)
		return;
	grow(&c->tmp, &c->tmpcap, c->ntmp + 1, sizeof(*c->tmp));
	c->tmp[c->ntmp++] = (struct stretch){ rec, part };
}

/* The run holding record i (i < nrec). */
static size_t run_of(const struct split_cache *c, size_t i)
{
	size_t lo = 0, hi = c->nruns;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->runs[mid].rec <= i)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Updates the runs for records [ia, ib) becoming c->mid (call before the
 * records themselves change): the runs around the middle are rebuilt from
 * the piece of the run before ia, the new records and the piece of the
 * run at ib; the runs after shift by the change in record count. Costs
 * the number of runs after the middle, not the number of records.
 */
static void splice_runs(struct split_cache *c, const struct middle *m)
{
	size_t k0 = c->nruns, k1 = c->nruns, first = 0, keep, i, n;

	c->ntmp = 0;
	if (m->ia < c->nrec) {
		k0 = run_of(c, m->ia);
		if (c->runs[k0].rec < m->ia)
			tmp_push(c, c->runs[k0].rec, c->runs[k0].part);
	}
	for (i = 0; i < c->nmid; i++)
		tmp_push(c, m->ia + i, c->mid[i].part);
	if (m->ib < c->nrec) {
		k1 = run_of(c, m->ib);
		tmp_push(c, m->ia + c->nmid, c->runs[k1].part);
		k1++;
	}
	if (k0 > 0 && c->ntmp && c->tmp[0].part == c->runs[k0 - 1].part)
		first = 1;	/* the middle continues the run before it */
	keep = c->nruns - k1;
	n = k0 + (c->ntmp - first) + keep;
	grow(&c->runs, &c->runcap, n, sizeof(*c->runs));
	if (keep)
		memmove(c->runs + n - keep, c->runs + k1,
			keep * sizeof(*c->runs));
	if (c->ntmp > first)
		memcpy(c->runs + k0, c->tmp + first,
		       (c->ntmp - first) * sizeof(*c->runs));
	for (i = n - keep; i < n; i++)
		c->runs[i].rec = c->runs[i].rec - m->ib + m->ia + c->nmid;
	c->nruns = n;
}

static void splice_records(struct split_cache *c, const struct middle *m,
			   size_t lo, size_t ln)
{
	size_t keep = c->nrec - m->ib, n = m->ia + c->nmid + keep, i, p = 0;

	/* a reused record leaves its part's count as it was */
	for (i = m->ia; i < m->ib; i++)
		if (!is_paired(c, c->pair_old, &p, i - m->ia) &&
		    --c->parts[c->recs[i].part].nrec == 0)
			c->live--;
	for (i = p = 0; i < c->nmid; i++)
		if (!is_paired(c, c->pair_new, &p, i) &&
		    c->parts[c->mid[i].part].nrec++ == 0)
			c->live++;
	grow(&c->recs, &c->reccap, n, sizeof(*c->recs));
	if (keep && m->ib != m->ia + c->nmid)
		memmove(c->recs + m->ia + c->nmid, c->recs + m->ib,
			keep * sizeof(*c->recs));
	if (c->nmid)
		memcpy(c->recs + m->ia, c->mid, c->nmid * sizeof(*c->recs));
	if (ln != lo)
		for (i = m->ia + c->nmid; i < n; i++)
			c->recs[i].off = ln - (lo - c->recs[i].off);
	c->nrec = n;
}

/*
 * Makes mem hold the new version, rewriting only the smaller of prefix
 * and suffix plus the middle when the slack around the data allows: the
 * suffix stays in place (the data grows or shrinks at the front) or the
 * prefix does. Otherwise a buffer of twice the size, data centred.
 */
static void store_version(struct split_cache *c, const char *d, size_t ln,
			  size_t p, size_t s)
{
	size_t lo = c->len, cost_front = ln - s, cost_back = ln - p;
	int front_ok = c->valid && c->base + lo >= ln;
	int back_ok = c->valid && c->base + ln <= c->cap;

	if (front_ok && (cost_front <= cost_back || !back_ok)) {
		c->base = c->base + lo - ln;
		memcpy(c->mem + c->base, d, ln - s);
	} else if (back_ok) {
		memcpy(c->mem + c->base + p, d + p, ln - p);
	} else {
		size_t cap;

		if (size_mul(ln, 2, &cap) < 0 || size_add(cap, 4096, &cap) < 0)
			abort();
		free(c->mem);
		c->mem = xmalloc(cap);
		c->cap = cap;
		c->base = (cap - ln) / 2;
		memcpy(c->mem + c->base, d, ln);
	}
	c->len = ln;
}

/* ---- the result ---- */

/* Bytes [*off, *off + return) of run k. */
static size_t run_span(const struct split_cache *c, size_t k, size_t *off)
{
	*off = c->recs[c->runs[k].rec].off;
	return (k + 1 < c->nruns ? c->recs[c->runs[k + 1].rec].off : c->len) -
	       *off;
}

/* Orders the parts by first appearance and counts their runs. */
static void collect_runs(struct split_cache *c, size_t *nout)
{
	size_t i;

	*nout = 0;
	for (i = 0; i < c->nruns; i++) {
		struct part *x = &c->parts[c->runs[i].part];

		if (x->seen != c->stamp) {
			x->seen = c->stamp;
			x->nruns = 0;
			x->out = (*nout)++;
			grow(&c->order, &c->ordercap, *nout, sizeof(*c->order));
			c->order[x->out] = c->runs[i].part;
		}
		x->nruns++;
	}
}

static int check_reassembly(const struct split_cache *c)
{
	const struct split_result *r = &c->res;
	const char *d = cached(c);
	size_t at = 0, i, j;

	if (c->nruns == r->n)
		return 1;	/* every part is one run, in data order */
	for (i = 0; i < r->n; i++)
		for (j = 0; j < r->parts[i].nranges; j++) {
			const struct split_range *g = &r->parts[i].ranges[j];

			if (memcmp(d + at, g->ptr, g->len))
				return 0;
			at += g->len;
		}
	return 1;
}

static int part_unchanged(const struct split_cache *c, const struct part *x,
			  int had_prev)
{
	return x->touch == c->stamp ? x->unchanged : had_prev;
}

/*
 * The usual case, each part one run (as many runs as live parts): the
 * parts are the runs, in order, and the version reassembles.
 */
static void build_one_run_each(struct split_cache *c, int had_prev)
{
	struct split_result *r = &c->res;
	const char *d = cached(c);
	size_t i;

	grow(&r->parts, &r->cap, c->nruns, sizeof(*r->parts));
	grow(&r->ranges, &r->rcap, c->nruns, sizeof(*r->ranges));
	for (i = 0; i < c->nruns; i++) {
		const struct part *x = &c->parts[c->runs[i].part];
		size_t off, len = run_span(c, i, &off);

		r->ranges[i] = (struct split_range){ d + off, len };
		r->parts[i] = (struct split_part){
			x->path, x->path_len, r->ranges + i, 1, len,
			part_unchanged(c, x, had_prev),
			c->runs[i].part == HEAD_PART };
	}
	r->n = c->nruns;
	r->reassembles = 1;
}

static void build_result(struct split_cache *c, int had_prev)
{
	struct split_result *r = &c->res;
	const char *d = cached(c);
	size_t n, i, at = 0;

	r->built = 1;
	if (c->nruns == c->live) {
		build_one_run_each(c, had_prev);
		return;
	}
	collect_runs(c, &n);
	grow(&r->parts, &r->cap, n, sizeof(*r->parts));
	grow(&r->ranges, &r->rcap, c->nruns, sizeof(*r->ranges));
	for (i = 0; i < n; i++) {
		struct part *x = &c->parts[c->order[i]];
		struct split_part *o = &r->parts[i];

		o->path = x->path;
		o->path_len = x->path_len;
		o->ranges = r->ranges + at;
		o->nranges = 0;
		o->size = 0;
		o->is_head = c->order[i] == HEAD_PART;
		o->unchanged = part_unchanged(c, x, had_prev);
		x->fill = at;
		at += x->nruns;
	}
	for (i = 0; i < c->nruns; i++) {
		struct part *x = &c->parts[c->runs[i].part];
		struct split_part *o = &r->parts[x->out];
		size_t off, len = run_span(c, i, &off);

		r->ranges[x->fill++] = (struct split_range){ d + off, len };
		o->nranges++;
		o->size += len;
	}
	r->n = n;
	r->reassembles = check_reassembly(c);
}

/*
 * The run of part id in a one-run-each version, after the splice: the one
 * holding its first new record; without one, the run is next to the
 * middle (records [ia, ia + nmid)), before or after it, for the part had
 * records in the old middle and its run is contiguous.
 */
static size_t part_run(const struct split_cache *c, uint32_t id, size_t ia)
{
	const struct part *x = &c->parts[id];
	size_t k;

	if (x->new_first != NONE)
		k = run_of(c, ia + x->new_first);
	else if (ia > 0 && c->recs[ia - 1].part == id)
		k = run_of(c, ia - 1);
	else
		k = run_of(c, ia + c->nmid);
	if (c->runs[k].part == id)
		return k;
	/* not reached while the above holds; a safe answer (a live part
	 * has a run) */
	for (k = 0; k + 1 < c->nruns && c->runs[k].part != id; k++)
		;
	assert(c->runs[k].part == id);
	return k;
}

/*
 * Lists what the run changed, from the parts it touched: new or changed
 * parts and parts that vanished. Each part of a one-run-each version is
 * the run holding its first new record (binary search); otherwise the
 * full listing is built first and the changed parts are copied from it.
 */
static void list_changes(struct split_cache *c, size_t ia)
{
	struct split_result *r = &c->res;
	const char *d = cached(c);
	size_t i;

	r->nchg = r->ngone = 0;
	grow(&r->chg, &r->chgcap, c->ntouched, sizeof(*r->chg));
	grow(&r->chg_ranges, &r->chgrcap, c->ntouched, sizeof(*r->chg_ranges));
	for (i = 0; i < c->ntouched; i++) {
		uint32_t id = c->touched[i];
		struct part *x = &c->parts[id];
		struct split_part *o = &r->chg[r->nchg];

		if (x->nrec == 0) {
			grow(&r->gone, &r->gonecap, r->ngone + 1, sizeof(*r->gone));
			r->gone[r->ngone++] = id;
			continue;
		}
		if (x->unchanged)
			continue;
		if (r->built) {
			*o = r->parts[x->out];
		} else {
			size_t off, len = run_span(c, part_run(c, id, ia), &off);

			r->chg_ranges[r->nchg] = (struct split_range){ d + off, len };
			*o = (struct split_part){ x->path, x->path_len,
						  r->chg_ranges + r->nchg, 1, len,
						  0, id == HEAD_PART };
		}
		r->nchg++;
	}
}

/*
 * Ends a run: a version whose parts are one run each (the sorted files
 * people split) is listed only on demand (split_result_count/part), so
 * that a run costs what changed, not the number of parts.
 */
static void finish(struct split_cache *c, int had_prev, size_t ia)
{
	c->had_prev = had_prev;
	c->res.built = 0;
	if (c->nruns == c->live)
		c->res.reassembles = 1;
	else
		build_result(c, had_prev);
	list_changes(c, ia);
}

/*
 * The cache takes the bytes of *b as its version instead of copying them;
 * *b gets the previous buffer back (empty contents), or none.
 */
static void adopt_version(struct split_cache *c, struct buf *b)
{
	char *old = c->mem;
	size_t oldcap = c->cap;

	c->mem = b->ptr;
	c->cap = b->cap;
	c->base = 0;
	c->len = b->len;
	b->ptr = old ? old : buf_empty;
	b->cap = old ? oldcap : 0;
	b->len = 0;
	if (b->cap)	/* buf_empty is every thread's: not written */
		b->ptr[0] = '\0';
}

static int split_version(struct split_cache *c, const char *data,
			 size_t len, struct buf *take,
			 const struct split_result **out, struct err *e)
{
	size_t lo = c->valid ? c->len : 0, p = 0, s = 0;
	struct middle m;
	int had_prev = c->valid;

	if (!data)
		data = "";	/* len is 0: keeps mem* and pcre2 off NULL */
	memset(&c->stats, 0, sizeof(c->stats));
	if (had_prev) {
		const char *old = cached(c);
		size_t n = lo < len ? lo : len;

		p = common_prefix(old, data, n);
		if (p == lo && p == len) {
			/* a new stamp: every part reads as unchanged */
			c->stamp++;
			c->ntouched = 0;
			c->stats.identical = 1;
			c->stats.kept_records = c->nrec;
			if (take)
				adopt_version(c, take);
			finish(c, 1, 0);
			*out = &c->res;
			return 0;
		}
		s = common_suffix(old + lo, data + len, n - p);
		find_middle(c, p, s, len, &m);
	} else {
		split_cache_reset(c);
		m = (struct middle){ 0, 0, 0, 0, len };
	}
	c->stamp++;
	if (parse_middle(c, data, m.a, m.b_new, &m, e) < 0) {
		split_cache_reset(c);
		return -1;
	}
	c->stats.parsed_bytes = m.b_new - m.a;
	c->stats.parsed_records = c->nmid;
	c->stats.kept_records = c->nrec - (m.ib - m.ia);
	mark_changes(c, data, &m);
	splice_runs(c, &m);
	splice_records(c, &m, lo, len);
	if (take)
		adopt_version(c, take);
	else
		store_version(c, data, len, p, s);
	c->valid = 1;
	finish(c, had_prev, m.ia);
	*out = &c->res;
	return 0;
}

int split_run(struct split_cache *c, const char *data, size_t len,
	      const struct split_result **out, struct err *e)
{
	return split_version(c, data, len, NULL, out, e);
}

int split_run_take(struct split_cache *c, struct buf *b,
		   const struct split_result **out, struct err *e)
{
	if (!b->cap)	/* buf_empty is not ours to keep */
		return split_version(c, b->ptr, b->len, NULL, out, e);
	return split_version(c, b->ptr, b->len, b, out, e);
}

/* The full listing, built on first use after a run. */
static const struct split_result *built(const struct split_result *r)
{
	if (!r->built)
		build_result(r->owner, r->owner->had_prev);
	return r;
}

size_t split_result_count(const struct split_result *r)
{
	return built(r)->n;
}

const struct split_part *split_result_part(const struct split_result *r,
					   size_t i)
{
	r = built(r);
	assert(i < r->n);
	return &r->parts[i];
}

size_t split_result_nchanged(const struct split_result *r)
{
	return r->nchg;
}

const struct split_part *split_result_changed(const struct split_result *r,
					      size_t i)
{
	assert(i < r->nchg);
	return &r->chg[i];
}

size_t split_result_nvanished(const struct split_result *r)
{
	return r->ngone;
}

const char *split_result_vanished(const struct split_result *r, size_t i,
				  size_t *len)
{
	const struct part *x;

	assert(i < r->ngone);
	x = &r->owner->parts[r->gone[i]];
	*len = x->path_len;
	return x->path;
}

int split_result_reassembles(const struct split_result *r)
{
	return r->reassembles;
}

void split_cache_stats(const struct split_cache *c, struct split_stats *out)
{
	*out = c->stats;
}

int split_part_copy(struct buf *out, const struct split_part *p,
		    struct err *e)
{
	size_t i, need;

	if (size_add(out->len, p->size, &need) < 0 || need > out->max)
		return err_set(e, ERR_STREAM,
			       "part %s: %zu bytes exceed the buffer limit",
			       p->path, p->size);
	if (buf_grow(out, p->size) < 0)
		return err_set(e, ERR_STREAM, "part %s: buffer limit",
			       p->path);
	for (i = 0; i < p->nranges; i++)
		buf_add(out, p->ranges[i].ptr, p->ranges[i].len);
	return 0;
}
