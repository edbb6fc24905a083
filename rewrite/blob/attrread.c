/*
 * attrread.c - a .gitattributes read the way git 2.39 reads it (attr.c),
 * for what attrs.c must know of the user's files: which lines assign
 * filter, diff, merge or text (expanding the root's macros), to which
 * paths, and whether as an LFS file has them. Pure: text in, answers out.
 *
 * git's reading: the text up to a NUL, after a UTF-8 BOM; per line,
 * blanks (space, TAB, CR, LF) skipped, `#` a comment; the pattern a word
 * or a C-quoted string (unquote_c_style; an invalid one is a word);
 * `[attr]NAME` defines a macro (the root file only; git ignores it
 * elsewhere); a pattern starting with `!` is ignored, one ending in `/`
 * matches directories only. The attributes are filled right to left on a
 * line and from the last line up, the first to assign one decides it
 * (fill_one); a macro expands where it is set, not where it is unset
 * (macroexpand_one); `binary` is `-diff -merge -text` unless the root
 * defines it. Where this reading could say too little (a pattern the
 * rules cannot match, an unset macro whose expansion elsewhere it stops,
 * macros nested too deep), a line counts as assigning all four, not our
 * way: attrs.c then adds our line, which is never wrong for a converted
 * path.
 */
#include <stdlib.h>
#include <string.h>

#include "way.h"

#define MACRO_DEPTH 8

/* A macro the root .gitattributes defines: its attributes. */
struct macro_ent {
	char *name, *def;
	size_t len, def_len;
	UT_hash_handle hh;
};

struct attr_macros {
	struct macro_ent *map;
	struct buf defs;	/* the [attr] lines they come from: name NUL def NUL */
	struct buf scratch, pat;
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * git's unquote_c_style on the token at p (n bytes, p[0] == '"') into
 * out: the bytes it took, closing quote included, or 0 when it is no C
 * string (git then takes the token as it stands).
 */
static size_t c_unquote(struct buf *out, const char *p, size_t n)
{
	size_t i = 1;
	int k;

	buf_reset(out);
	while (i < n) {
		char c = p[i++];

		if (c == '"')
			return i;
		if (c != '\\') {
			buf_addch(out, c);
			continue;
		}
		if (i >= n)
			return 0;
		c = p[i++];
		switch (c) {
		case 'a': c = '\a'; break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 't': c = '\t'; break;
		case 'v': c = '\v'; break;
		case '\\': case '"': break;
		case '0': case '1': case '2': case '3':
			k = c - '0';
			if (i + 2 > n || p[i] < '0' || p[i] > '7' ||
			    p[i + 1] < '0' || p[i + 1] > '7')
				return 0;
			k = (k << 6) | ((p[i] - '0') << 3) | (p[i + 1] - '0');
			i += 2;
			c = (char)k;
			break;
		default:
			return 0;
		}
		buf_addch(out, c);
	}
	return 0;
}

/* The pattern of the line at p (len bytes, no blank first) in *pat
 * (borrowed: p itself, or scratch when C-quoted); returns where the
 * attributes start. */
static size_t line_pattern(struct buf *scratch, const char *p, size_t len,
			   const char **pat, size_t *plen)
{
	size_t i = 0, took;

	if (len && p[0] == '"' && (took = c_unquote(scratch, p, len)) > 0) {
		*pat = scratch->ptr;
		*plen = scratch->len;
		return took;
	}
	while (i < len && !is_blank(p[i]))
		i++;
	*pat = p;
	*plen = i;
	return i;
}

static void words_mask(const struct attr_macros *m, const char *p, size_t len,
		       int depth, unsigned *says, unsigned *lfs);

/* One attribute word: what it assigns, expanding a set macro. */
static void word_mask(const struct attr_macros *m, const char *w, size_t len,
		      int depth, unsigned *says, unsigned *lfs)
{
	static const char *const names[] = { "filter", "diff", "merge", "text" };
	static const char binary[] = "-diff -merge -text";
	const struct macro_ent *x;
	const char *eq = memchr(w, '=', len), *val = NULL;
	char state = 0;		/* 0 set, '-' unset, '!' unspecified, '=' a value */
	size_t nlen = eq ? (size_t)(eq - w) : len, vlen = 0, k;

	if (nlen && (w[0] == '-' || w[0] == '!')) {
		state = w[0];	/* `-a=b` unsets a, as git reads it */
		w++;
		nlen--;
	} else if (eq) {
		state = '=';
		val = eq + 1;
		vlen = len - nlen - 1;
	}
	for (k = 0; k < 4; k++) {
		unsigned bit = 1u << k;

		if (nlen != strlen(names[k]) || memcmp(w, names[k], nlen))
			continue;
		if (*says & bit)
			return;
		*says |= bit;
		if (k == 3 ? state == '-' :
		    state == '=' && vlen == 3 && !memcmp(val, "lfs", 3))
			*lfs |= bit;
		return;
	}
	HASH_FIND(hh, m->map, w, nlen, x);
	if (!x && !(nlen == 6 && !memcmp(w, "binary", 6)))
		return;		/* no macro: none of the four */
	if (state || depth >= MACRO_DEPTH) {
		*says = ATTR_ALL;	/* what it stops elsewhere is not known */
		return;
	}
	if (x)
		words_mask(m, x->def, x->def_len, depth + 1, says, lfs);
	else
		words_mask(m, binary, sizeof(binary) - 1, depth + 1, says, lfs);
}

/* The attributes the words of p (len bytes) assign, right to left, added
 * to *says (and *lfs, those assigned our way) where not decided yet. */
static void words_mask(const struct attr_macros *m, const char *p, size_t len,
		       int depth, unsigned *says, unsigned *lfs)
{
	size_t end = len, s;

	while (end > 0 && *says != ATTR_ALL) {
		while (end > 0 && is_blank(p[end - 1]))
			end--;
		if (!end)
			break;
		for (s = end; s > 0 && !is_blank(p[s - 1]); s--)
			;
		word_mask(m, p + s, end - s, depth, says, lfs);
		end = s;
	}
}

/* Calls fn on each line of text that is no comment, its leading blanks
 * skipped. */
static void each_attr_line(const char *p, size_t len,
			   void (*fn)(void *ctx, const char *line, size_t n),
			   void *ctx)
{
	const char *end, *nul = memchr(p, '\0', len);

	if (nul)
		len = (size_t)(nul - p);
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) {
		p += 3;
		len -= 3;
	}
	for (end = p + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *q = p;

		p += n + (nl != NULL);
		while (n && is_blank(*q)) {
			q++;
			n--;
		}
		if (n && *q != '#')
			fn(ctx, q, n);
	}
}

struct attr_macros *attr_macros_new(void)
{
	struct attr_macros *m = xcalloc(1, sizeof(*m));

	buf_init(&m->defs, BUF_MAX_DEFAULT);
	buf_init(&m->scratch, BUF_MAX_DEFAULT);
	buf_init(&m->pat, BUF_MAX_DEFAULT);
	return m;
}

static void macros_clear(struct attr_macros *m)
{
	struct macro_ent *x, *t;

	HASH_ITER(hh, m->map, x, t) {
		HASH_DEL(m->map, x);
		free(x->name);
		free(x->def);
		free(x);
	}
}

void attr_macros_free(struct attr_macros *m)
{
	if (!m)
		return;
	macros_clear(m);
	buf_release(&m->defs);
	buf_release(&m->scratch);
	buf_release(&m->pat);
	free(m);
}

/* A root line: an [attr] definition goes into m->scratch. */
static void macro_line(void *ctx, const char *p, size_t len)
{
	struct attr_macros *m = ctx;
	const char *pat;
	size_t plen, at = line_pattern(&m->pat, p, len, &pat, &plen);

	if (plen > 6 && !memcmp(pat, "[attr]", 6)) {
		buf_add(&m->scratch, pat + 6, plen - 6);
		buf_addch(&m->scratch, '\0');
		buf_add(&m->scratch, p + at, len - at);
		buf_addch(&m->scratch, '\0');
	}
}

int attr_macros_read(struct attr_macros *m, const char *text, size_t len)
{
	const char *p, *end;

	buf_reset(&m->scratch);
	each_attr_line(text, len, macro_line, m);
	if (m->scratch.len == m->defs.len &&
	    !memcmp(m->scratch.ptr, m->defs.ptr, m->defs.len))
		return 0;
	buf_set(&m->defs, m->scratch.ptr, m->scratch.len);
	macros_clear(m);
	for (p = m->defs.ptr, end = p + m->defs.len; p < end;) {
		const char *def = p + strlen(p) + 1;
		struct macro_ent *x;
		size_t n = strlen(p);

		HASH_FIND(hh, m->map, p, n, x);
		if (x) {	/* a later definition wins */
			HASH_DEL(m->map, x);
			free(x->name);
			free(x->def);
			free(x);
		}
		x = xcalloc(1, sizeof(*x));
		x->name = xmemdup(p, n);
		x->len = n;
		x->def_len = strlen(def);
		x->def = xmemdup(def, x->def_len);
		HASH_ADD_KEYPTR(hh, m->map, x->name, x->len, x);
		p = def + x->def_len + 1;
	}
	return 1;
}

struct rules_ctx {
	const struct attr_macros *m;
	struct attr_rule *v;
	size_t n, alloc;
	struct buf pat, line;
	/* consecutive lines that assign the same way, as one rule set: a
	 * path any of them matches gets the same from them as from one
	 * (a run's own single-path lines are thousands of such lines) */
	struct buf group;
	unsigned gsays, glfs;
};

static void rule_push(struct rules_ctx *rc, struct rules *pat, unsigned says,
		      unsigned lfs)
{
	if (rc->n == rc->alloc) {
		rc->alloc = rc->alloc ? 2 * rc->alloc : 4;
		rc->v = xrealloc(rc->v, rc->alloc * sizeof(*rc->v));
	}
	rc->v[rc->n].pat = pat;
	rc->v[rc->n].says = says;
	rc->v[rc->n].lfs = lfs;
	rc->n++;
}

/* The lines of the group so far become one rule. */
static void group_flush(struct rules_ctx *rc)
{
	struct err ignored = ERR_INIT;
	struct rules *pat = NULL;

	if (!rc->group.len)
		return;
	if (rules_parse(&pat, rc->group.ptr, rc->group.len,
			"(nested .gitattributes)", &ignored) < 0)
		rule_push(rc, NULL, ATTR_ALL, 0);	/* not expected: each parsed */
	else
		rule_push(rc, pat, rc->gsays, rc->glfs);
	buf_reset(&rc->group);
}

/* A line of a nested file: kept when it assigns one of the four. */
static void rule_line(void *ctx, const char *p, size_t len)
{
	struct rules_ctx *rc = ctx;
	struct err ignored = ERR_INIT;
	struct rules *one = NULL;
	unsigned says = 0, lfs = 0;
	const char *pat;
	size_t plen, at = line_pattern(&rc->pat, p, len, &pat, &plen);

	if (plen > 6 && !memcmp(pat, "[attr]", 6))
		return;		/* git allows macros at the root only */
	words_mask(rc->m, p + at, len - at, 0, &says, &lfs);
	if (!says)
		return;
	if (plen && pat[0] == '!')
		return;		/* git ignores negative patterns */
	if (plen && pat[plen - 1] == '/')
		return;		/* matches directories only, never a file */
	buf_reset(&rc->line);
	if (plen && !memchr(pat, '\n', plen) && !memchr(pat, '\r', plen) &&
	    !memchr(pat, '\0', plen)) {
		rules_quote_value(&rc->line, pat, plen);
		buf_adds(&rc->line, " lfs\n");
		if (rules_parse(&one, rc->line.ptr, rc->line.len,
				"(nested .gitattributes)", &ignored) < 0)
			one = NULL;
	}
	if (!one) {		/* cannot tell: taken to match all */
		group_flush(rc);
		rule_push(rc, NULL, ATTR_ALL, 0);
		return;
	}
	rules_free(one);
	if (rc->group.len && (rc->gsays != says || rc->glfs != lfs))
		group_flush(rc);
	if (buf_add(&rc->group, rc->line.ptr, rc->line.len) < 0) {
		group_flush(rc);	/* a rule file's limit reached */
		buf_add(&rc->group, rc->line.ptr, rc->line.len);
	}
	rc->gsays = says;
	rc->glfs = lfs;
}

size_t attr_rules_read(struct attr_rule **out, const struct attr_macros *m,
		       const char *text, size_t len)
{
	struct rules_ctx rc = { m, NULL, 0, 0, BUF_INIT(BUF_MAX_DEFAULT),
				BUF_INIT(BUF_MAX_DEFAULT),
				BUF_INIT(RULES_MAX_FILE), 0, 0 };

	each_attr_line(text, len, rule_line, &rc);
	group_flush(&rc);
	buf_release(&rc.pat);
	buf_release(&rc.line);
	buf_release(&rc.group);
	*out = rc.v;
	return rc.n;
}

void attr_rules_free(struct attr_rule *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		rules_free(v[i].pat);
	free(v);
}

int attr_rule_hits(const struct attr_rule *r, const char *rel, size_t len,
		   struct err *e)
{
	const struct rule *hit;

	if (!r->pat)
		return 1;
	if (rules_match(&hit, r->pat, rel, len, 0, e) < 0)
		return -1;
	return hit != NULL;
}
