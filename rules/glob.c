/*
 * glob.c - git's wildmatch (wildmatch.c) with git's .gitattributes
 * matching around it (attr.c path_matches, dir.c match_basename and
 * match_pathname), rewritten to work on counted paths. The structure and
 * the early-abort codes follow git's so the answers, including the odd
 * ones, stay git's: tests/integration/rules_checkattr.sh compares them
 * with `git check-attr`.
 */
#include "rules/glob.h"

#include <stdlib.h>
#include <string.h>

typedef unsigned char uchar;

/* dowild results, as in git: aborts prune the star backtracking. */
enum {
	WM_MATCH = 0,
	WM_NOMATCH = 1,
	WM_ABORT_ALL = -1,
	WM_ABORT_TO_STARSTAR = -2,
	STAR_CONTINUE = 2,	/* match_star consumed "*" "/" and text up to a '/' */
};

/* Malformed brackets: git aborts on them, so the pattern never matches. */
enum {
	BR_UNTERMINATED = -10,
	BR_BADCLASS = -11,
};

struct wm {
	const uchar *pstart;	/* for the "is '**' at a component start" test */
	const uchar *tend;
	int pathname;		/* WM_PATHNAME */
	/*
	 * git's backtracking is exponential in the number of stars for some
	 * patterns ("/" "**" "/" "**" "/" ... against a deep path). dowild is a
	 * pure function of (pattern position, text position), so once star
	 * loops nest deeper than MEMO_DEPTH its results are remembered, one
	 * row per pattern position that follows a star run (allocated when
	 * first needed): rows[p - pstart][t - tstart] = result + 3, 0 unknown.
	 */
	const uchar *tstart;
	size_t plen, tlen, memo_bytes;
	signed char **rows;
	int depth;
};

#define MEMO_DEPTH 2
#define MEMO_MAX ((size_t)64 << 20)	/* bytes of rows; beyond, no memo */

/* git's is_glob_special (ctype.c): the bytes wildmatch treats specially. */
static int glob_special(int c)
{
	return c == '*' || c == '?' || c == '[' || c == '\\';
}

/* ---- character classes, ASCII only, as git's sane_ctype has them ---- */

static int cc_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int cc_digit(int c) { return c >= '0' && c <= '9'; }
static int cc_graph(int c) { return c > 0x20 && c < 0x7f; }

/*
 * Whether c belongs to [:name:]; -1 for an unknown name. git's isspace is
 * its own table: space, \t, \n, \r, but not \v or \f.
 */
static int cc_member(const uchar *name, size_t n, int c)
{
	static const char *const names[] = {
		"alnum", "alpha", "blank", "cntrl", "digit", "graph",
		"lower", "print", "punct", "space", "upper", "xdigit",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && !memcmp(names[i], name, n))
			break;
	switch (i) {
	case 0: return cc_alpha(c) || cc_digit(c);
	case 1: return cc_alpha(c);
	case 2: return c == ' ' || c == '\t';
	case 3: return (c >= 0 && c < 0x20) || c == 0x7f;
	case 4: return cc_digit(c);
	case 5: return cc_graph(c);
	case 6: return c >= 'a' && c <= 'z';
	case 7: return c >= 0x20 && c < 0x7f;
	case 8: return cc_graph(c) && !cc_alpha(c) && !cc_digit(c);
	case 9: return c == ' ' || c == '\t' || c == '\n' || c == '\r';
	case 10: return c >= 'A' && c <= 'Z';
	case 11: return cc_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	default: return -1;
	}
}

/*
 * A "[:" inside a bracket at *pp (the '['). Returns 1 when it was a class
 * (*pp left on its closing ']'), 0 when it is a plain '[' member (as git:
 * no ":]" before the next ']'), or a BR_ code. *hit is set when c matches.
 */
static int bracket_class(const uchar **pp, int c, int *hit)
{
	const uchar *s = *pp + 2, *p = s;
	int m;

	while (*p && *p != ']')
		p++;
	if (!*p)
		return BR_UNTERMINATED;
	if (p == s || p[-1] != ':') {
		if (c == '[')
			*hit = 1;
		return 0;
	}
	m = cc_member(s, (size_t)(p - s - 1), c);
	if (m < 0)
		return BR_BADCLASS;
	if (m)
		*hit = 1;
	*pp = p;
	return 1;
}

/*
 * Matches c (a byte, or -1 to only check the syntax) against the bracket
 * expression at *pp (the '['), git's loop step by step: a ']' first in the
 * set is a member, '-' is literal first, last or after a range or class.
 * On success *pp is left on the closing ']' and the result is WM_MATCH or
 * WM_NOMATCH; a BR_ code for a malformed expression.
 */
static int match_bracket(const uchar **pp, int c, int pathname)
{
	const uchar *p = *pp;
	int p_ch, prev_ch = 0, hit = 0, negated, r;

	p_ch = *++p;
	if (p_ch == '^')
		p_ch = '!';
	negated = p_ch == '!';
	if (negated)
		p_ch = *++p;
	for (;;) {
		if (!p_ch)
			return BR_UNTERMINATED;
		if (p_ch == '\\') {
			p_ch = *++p;
			if (!p_ch)
				return BR_UNTERMINATED;
			if (c == p_ch)
				hit = 1;
		} else if (p_ch == '-' && prev_ch && p[1] && p[1] != ']') {
			p_ch = *++p;
			if (p_ch == '\\') {
				p_ch = *++p;
				if (!p_ch)
					return BR_UNTERMINATED;
			}
			if (c <= p_ch && c >= prev_ch)
				hit = 1;
			p_ch = 0;	/* a range cannot start another one */
		} else if (p_ch == '[' && p[1] == ':') {
			r = bracket_class(&p, c, &hit);
			if (r < 0)
				return r;
			p_ch = r ? 0 : '[';
		} else if (c == p_ch) {
			hit = 1;
		}
		prev_ch = p_ch;
		p_ch = *++p;
		if (p_ch == ']')
			break;
	}
	*pp = p;
	if (hit == negated || (pathname && c == '/'))
		return WM_NOMATCH;
	return WM_MATCH;
}

static int dowild(struct wm *w, const uchar *p, const uchar *t);

/* dowild through the memo once star loops nest deep enough. */
static int dowild_memo(struct wm *w, const uchar *p, const uchar *t)
{
	signed char **row;
	size_t at = (size_t)(t - w->tstart);

	if (w->depth <= MEMO_DEPTH)
		return dowild(w, p, t);
	if (!w->rows)
		w->rows = xcalloc(w->plen + 1, sizeof(*w->rows));
	row = &w->rows[p - w->pstart];
	if (!*row) {
		if (w->memo_bytes + w->tlen + 1 > MEMO_MAX)
			return dowild(w, p, t);
		w->memo_bytes += w->tlen + 1;
		*row = xcalloc(w->tlen + 1, 1);
	}
	if (!(*row)[at])
		(*row)[at] = (signed char)(dowild(w, p, t) + 3);
	return (*row)[at] - 3;
}

/*
 * Decides whether a run of stars at p may cross '/' (git: without
 * WM_PATHNAME always; with it only a "**" that fills a whole component),
 * and handles the "**" "/" matches-nothing case. Returns WM_MATCH when
 * that case matched, else -1 with *slash set and *pp past the run.
 */
static int star_kind(struct wm *w, const uchar **pp, const uchar *t,
		     int *slash)
{
	const uchar *p = *pp, *prev = p - 1;

	p++;
	if (*p != '*') {
		*slash = !w->pathname;
	} else {
		while (*++p == '*')
			;
		if (!w->pathname) {
			*slash = 1;
		} else if ((prev < w->pstart || *prev == '/') &&
			   (*p == '\0' || *p == '/' || (p[0] == '\\' && p[1] == '/'))) {
			/* "a/" "**" "/b" also matches "a/b": try "**" "/" as empty
			 * (through the memo: a chain of them is exponential) */
			if (p[0] == '/') {
				int r;

				w->depth++;
				r = dowild_memo(w, p + 1, t);
				w->depth--;
				if (r == WM_MATCH)
					return WM_MATCH;
			}
			*slash = 1;
		} else {
			*slash = 0;
		}
	}
	*pp = p;
	return -1;
}

/*
 * A star run at *pp against the text at *tp: git's backtracking loop.
 * Returns a WM_ result, or STAR_CONTINUE with *pp on a '/' and *tp on the
 * next '/' in the text (a single '*' followed by '/').
 */
static int match_star(struct wm *w, const uchar **pp, const uchar **tp)
{
	const uchar *p = *pp, *t = *tp, *slash;
	int match_slash, r = WM_ABORT_ALL;

	if (star_kind(w, &p, t, &match_slash) == WM_MATCH)
		return WM_MATCH;
	if (*p == '\0') {
		/* trailing "**" matches everything, trailing "*" one component */
		if (!match_slash && memchr(t, '/', (size_t)(w->tend - t)))
			return WM_NOMATCH;
		return WM_MATCH;
	}
	if (!match_slash && *p == '/') {
		slash = memchr(t, '/', (size_t)(w->tend - t));
		if (!slash)
			return WM_NOMATCH;
		*pp = p;
		*tp = slash;
		return STAR_CONTINUE;
	}
	w->depth++;
	while (t < w->tend) {
		/* a literal after the star: skip text up to its next occurrence */
		if (!glob_special(*p)) {
			while (t < w->tend && (match_slash || *t != '/') && *t != *p)
				t++;
			if (t == w->tend || *t != *p) {
				r = WM_NOMATCH;
				break;
			}
		}
		r = dowild_memo(w, p, t);
		if (r != WM_NOMATCH) {
			if (!match_slash || r != WM_ABORT_TO_STARSTAR)
				break;
		} else if (!match_slash && *t == '/') {
			r = WM_ABORT_TO_STARSTAR;
			break;
		}
		r = WM_ABORT_ALL;
		t++;
	}
	w->depth--;
	return r;
}

/* git's dowild over a NUL-terminated pattern and a counted text. */
static int dowild(struct wm *w, const uchar *p, const uchar *t)
{
	int r;

	for (; *p; p++, t++) {
		if (*p == '*') {
			r = match_star(w, &p, &t);
			if (r != STAR_CONTINUE)
				return r;
			continue;
		}
		if (t == w->tend)
			return WM_ABORT_ALL;
		switch (*p) {
		case '\\':
			/* a lone trailing '\\' matches nothing (git: compares with NUL) */
			if (!*++p || *t != *p)
				return WM_NOMATCH;
			break;
		case '?':
			if (w->pathname && *t == '/')
				return WM_NOMATCH;
			break;
		case '[':
			r = match_bracket(&p, *t, w->pathname);
			if (r != WM_MATCH)
				return r < 0 ? WM_ABORT_ALL : r;
			break;
		default:
			if (*t != *p)
				return WM_NOMATCH;
		}
	}
	return t == w->tend ? WM_MATCH : WM_NOMATCH;
}

/* ---- checking a pattern ---- */

/*
 * Walks the pattern as dowild would and reports what makes git never
 * match it: an unterminated bracket, an unknown class, a lone '\\'.
 */
static int check_syntax(const uchar *pat, size_t *bad, const char **msg)
{
	const uchar *p, *q;
	int r;

	for (p = pat; *p; p++) {
		if (*p == '\\') {
			if (!p[1]) {
				*bad = (size_t)(p - pat);
				*msg = "pattern ends with a lone '\\' (git never "
				       "matches it; quote a pattern that has blanks)";
				return -1;
			}
			p++;
		} else if (*p == '[') {
			q = p;
			r = match_bracket(&q, -1, 0);
			if (r == BR_UNTERMINATED || r == BR_BADCLASS) {
				*bad = (size_t)(p - pat);
				*msg = r == BR_BADCLASS ?
					"unknown [:class:] in bracket expression (git never matches it)" :
					"unterminated '[' (git never matches it; write \\[ for a literal '[')";
				return -1;
			}
			p = q;
		}
	}
	return 0;
}

/* git's simple_length: bytes before the first glob special. */
static size_t literal_prefix(const char *s)
{
	size_t n = 0;

	while (s[n] && !glob_special((uchar)s[n]))
		n++;
	return n;
}

/*
 * git before 2.45 cut the literal prefix off an anchored pattern before
 * calling wildmatch, so a "**" right after it looked like it started a
 * component: "foo**" "/bar" matched foo/x/bar. Newer git keeps one byte of
 * context and reads it as "foo*" "/bar". A rule must mean one thing.
 */
static int check_glued_starstar(const struct rules_glob *g, size_t *bad,
				const char **msg)
{
	const char *q = g->pat + g->skip;
	size_t i = g->prefix;

	if (g->nodir || i == 0 || q[i] != '*' || q[i + 1] != '*' || q[i - 1] == '/')
		return 0;
	while (q[i] == '*')
		i++;
	if (q[i] && q[i] != '/' && !(q[i] == '\\' && q[i + 1] == '/'))
		return 0;
	*bad = g->skip + g->prefix;
	*msg = "'**' glued to a name: git versions disagree on whether it "
	       "crosses '/'; write '*', or put '**' between slashes";
	return -1;
}

static int check_shape(const char *pat, size_t len, size_t *bad,
		       const char **msg)
{
	*bad = 0;
	if (len == 0) {
		*msg = "empty pattern";
		return -1;
	}
	if (memchr(pat, '\0', len)) {
		*bad = (size_t)((const char *)memchr(pat, '\0', len) - pat);
		*msg = "NUL byte in pattern";
		return -1;
	}
	if (pat[0] == '!') {
		*msg = "negative patterns are not allowed in .gitattributes "
		       "(write \\! for a literal '!')";
		return -1;
	}
	if (pat[len - 1] == '/') {
		*bad = len - 1;
		*msg = "pattern ends with '/': .gitattributes never match "
		       "directories (git never matches it); write 'dir/**' "
		       "for the files below dir";
		return -1;
	}
	return 0;
}

int rules_glob_init(struct rules_glob *g, const char *pat, size_t len,
		    size_t *bad, const char **msg)
{
	memset(g, 0, sizeof(*g));
	if (check_shape(pat, len, bad, msg) < 0)
		return -1;
	g->pat = xmemdup(pat, len);
	g->len = len;
	if (check_syntax((const uchar *)g->pat, bad, msg) < 0)
		goto fail;
	g->nodir = memchr(pat, '/', len) == NULL;
	g->skip = !g->nodir && pat[0] == '/';
	g->prefix = literal_prefix(g->pat + g->skip);
	if (check_glued_starstar(g, bad, msg) < 0)
		goto fail;
	return 0;
fail:
	rules_glob_release(g);
	return -1;
}

void rules_glob_release(struct rules_glob *g)
{
	if (!g)
		return;
	free(g->pat);
	memset(g, 0, sizeof(*g));
}

/* ---- matching ---- */

static void wm_init(struct wm *w, const uchar *pat, size_t plen,
		    const uchar *text, const uchar *tend, int pathname)
{
	memset(w, 0, sizeof(*w));
	w->pstart = pat;
	w->plen = plen;
	w->tstart = text;
	w->tend = tend;
	w->tlen = (size_t)(tend - text);
	w->pathname = pathname;
}

/* 1 on a match; frees the memo. */
static int wm_run(struct wm *w, const uchar *p, const uchar *t)
{
	int r = dowild(w, p, t);
	size_t i;

	if (w->rows) {
		for (i = 0; i <= w->plen; i++)
			free(w->rows[i]);
		free(w->rows);
	}
	return r == WM_MATCH;
}

/* dir.c match_basename: the whole pattern, no WM_PATHNAME. */
static int match_basename(const struct rules_glob *g, const char *path,
			  size_t len)
{
	const char *base = path + len;
	struct wm w;

	while (base > path && base[-1] != '/')
		base--;
	wm_init(&w, (const uchar *)g->pat, g->len, (const uchar *)base,
		(const uchar *)path + len, 0);
	return wm_run(&w, w.pstart, (const uchar *)base);
}

/*
 * dir.c match_pathname: the literal prefix is compared first, then
 * wildmatch runs on the rest. pstart stays at the pattern's start, which
 * is what newer git's "keep one byte of context" amounts to; the patterns
 * where older git differs were refused by check_glued_starstar.
 */
static int match_pathname(const struct rules_glob *g, const char *path,
			  size_t len)
{
	const char *q = g->pat + g->skip;
	size_t qlen = g->len - g->skip;
	struct wm w;

	if (g->prefix > len || memcmp(q, path, g->prefix))
		return 0;
	if (g->prefix == qlen)
		return len == qlen;
	wm_init(&w, (const uchar *)q, qlen, (const uchar *)path,
		(const uchar *)path + len, 1);
	return wm_run(&w, w.pstart + g->prefix, (const uchar *)path + g->prefix);
}

int rules_glob_match(const struct rules_glob *g, const char *path, size_t len)
{
	return g->nodir ? match_basename(g, path, len)
			: match_pathname(g, path, len);
}

/* ---- .gitattributes forms (docs/FORMATS.md §7) ---- */

/* attr.c ends an unquoted pattern at these. */
static int attr_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * Appends the pattern p (n bytes, no NUL) the way attr.c reads it back
 * byte for byte. Without a blank it is written as it is, a first '#'
 * (a comment) or '"' (a quoted pattern) escaped with '\\', which wildmatch
 * reads as the byte itself: what every git and git-lfs understands. With
 * a blank it is C-quoted, the only way to keep a blank in a pattern (git
 * 2.13 and later unquote a pattern that starts with '"'; older git would
 * take the quotes literally and match nothing): '"' and '\\' escaped, TAB,
 * LF, CR as \t \n \r. Replacing a blank by [[:space:]], as `git lfs
 * track` does, would also match the other three blanks.
 */
static int attr_emit(struct buf *out, const char *p, size_t n)
{
	size_t i;
	int quote = 0, r = 0;

	for (i = 0; i < n && !quote; i++)
		quote = attr_blank((uchar)p[i]);
	if (!quote) {
		if (n && (p[0] == '#' || p[0] == '"'))
			r = buf_addch(out, '\\');
		return r < 0 ? -1 : buf_add(out, p, n);
	}
	r = buf_addch(out, '"');
	for (i = 0; i < n && r == 0; i++) {
		switch (p[i]) {
		case '"':
		case '\\':
			r = buf_addch(out, '\\');
			if (r == 0)
				r = buf_addch(out, p[i]);
			break;
		case '\t':
			r = buf_adds(out, "\\t");
			break;
		case '\n':
			r = buf_adds(out, "\\n");
			break;
		case '\r':
			r = buf_adds(out, "\\r");
			break;
		default:
			r = buf_addch(out, p[i]);
		}
	}
	return r < 0 ? -1 : buf_addch(out, '"');
}

/* Restores out to old bytes and returns -1. */
static int attr_undo(struct buf *out, size_t old)
{
	out->len = old;
	out->ptr[old] = '\0';
	return -1;
}

int rules_glob_attr(struct buf *out, const struct rules_glob *g)
{
	size_t old = out->len;
	int r;

	/* "[attr]..." starts a macro line, quoted or not: the same set,
	 * reordered */
	if (!strncmp(g->pat, "[attr]", 6)) {
		struct buf tmp = BUF_INIT(out->max);
		r = buf_adds(&tmp, "[tatr]");
		if (r == 0)
			r = buf_add(&tmp, g->pat + 6, g->len - 6);
		if (r == 0)
			r = attr_emit(out, tmp.ptr, tmp.len);
		buf_release(&tmp);
	} else {
		r = attr_emit(out, g->pat, g->len);
	}
	return r < 0 ? attr_undo(out, old) : 0;
}

int rules_glob_attr_path(struct buf *out, const char *path, size_t len)
{
	struct buf tmp = BUF_INIT(out->max);
	size_t old = out->len, i;
	int r = buf_addch(&tmp, '/');

	for (i = 0; r == 0 && i < len; i++) {
		if (glob_special((uchar)path[i]))
			r = buf_addch(&tmp, '\\');
		if (r == 0)
			r = buf_addch(&tmp, path[i]);
	}
	if (r == 0)
		r = attr_emit(out, tmp.ptr, tmp.len);
	buf_release(&tmp);
	return r < 0 ? attr_undo(out, old) : 0;
}
