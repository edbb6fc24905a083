/*
 * replace.c - expressions files in git-filter-repo's format, and applying
 * them to a text (the format and its semantics are in replace.h; git
 * filter-repo 2.38's get_replace_text, glob_to_regex with Python 3.11's
 * fnmatch.translate, bytes.replace and re.sub with re._parser's template
 * rules are what this follows, written anew).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "replace/replace.h"

#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A piece of a regex's replacement: bytes, or a group (group >= 0). */
struct piece {
	size_t off, n;		/* bytes of the expression's lit */
	int group;		/* -1: the bytes */
};

struct expr {
	size_t line;
	char *text;		/* the line as written */
	size_t text_len;
	char *find;		/* a literal's bytes */
	size_t find_len;
	char *repl;		/* the replacement (after ==>, or the default) */
	size_t repl_len;
	struct buf lit;		/* the template's unescaped bytes */
	pcre2_code *re;		/* a regex or glob */
	pcre2_match_data *md;
	struct piece *pieces;
	size_t npieces;
	uint64_t replaced, changed;
	uint64_t run;		/* matches in the text being applied */
};

struct replace_set {
	char *name;
	struct expr *v;		/* literals first, then regexes, each in file order */
	size_t n, cap;
	size_t *order;		/* file order -> index in v */
	struct buf a, b;	/* the text between two expressions */
};

static int fail(struct err *e, const struct replace_set *s, size_t line,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(struct err *e, const struct replace_set *s, size_t line,
		const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(e, ERR_USAGE, "%s:%zu: %s", s->name, line, msg);
}

static void expr_release(struct expr *x)
{
	free(x->text);
	free(x->find);
	free(x->repl);
	buf_release(&x->lit);
	pcre2_match_data_free(x->md);
	pcre2_code_free(x->re);
	free(x->pieces);
}

void replace_free(struct replace_set *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		expr_release(&s->v[i]);
	free(s->v);
	free(s->order);
	free(s->name);
	buf_release(&s->a);
	buf_release(&s->b);
	free(s);
}

/* ---- globs: Python 3.11's fnmatch.translate, without its (?s: )\Z ---- */

/* A byte of a glob as a PCRE2 literal: every ASCII byte that is no
 * letter or digit gets a backslash (a literal then, in a class too). */
static void add_escaped(struct buf *out, char c)
{
	if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	      (c >= 'A' && c <= 'Z') || (unsigned char)c >= 0x80))
		buf_addch(out, '\\');
	buf_addch(out, c);
}

/*
 * The class between g[i] (after the '[') and g[j] (the ']') as fnmatch
 * makes it: split where a '-' makes a range (fnmatch's chunks), empty
 * ranges (b-a) dropped, a leading '!' negates; "" never matches, "!" is
 * any byte. Into out.
 */
static void glob_class(struct buf *out, const char *g, size_t i, size_t j)
{
	struct buf *chunks = NULL;
	size_t n = 0, k, c;

	if (j == i) {
		buf_adds(out, "(?!)");
		return;
	}
	if (j - i == 1 && g[i] == '!') {
		buf_addch(out, '.');
		return;
	}
	chunks = xcalloc(j - i + 1, sizeof(*chunks));
	if (!memchr(g + i, '-', j - i)) {
		buf_init(&chunks[n], BUF_MAX_DEFAULT);
		buf_add(&chunks[n++], g + i, j - i);
	} else {
		k = g[i] == '!' ? i + 2 : i + 1;
		for (;;) {
			const char *d = k < j ? memchr(g + k, '-', j - k) : NULL;

			if (!d)
				break;
			buf_init(&chunks[n], BUF_MAX_DEFAULT);
			buf_add(&chunks[n++], g + i, (size_t)(d - g) - i);
			i = (size_t)(d - g) + 1;
			k = i + 2;
		}
		if (j > i) {
			buf_init(&chunks[n], BUF_MAX_DEFAULT);
			buf_add(&chunks[n++], g + i, j - i);
		} else {
			buf_addch(&chunks[n - 1], '-');
		}
		for (k = n; k-- > 1;) {
			struct buf *a = &chunks[k - 1], *b = &chunks[k];

			if (!a->len || !b->len ||
			    (unsigned char)a->ptr[a->len - 1] <= (unsigned char)b->ptr[0])
				continue;
			a->len--;
			buf_add(a, b->ptr + 1, b->len - 1);
			buf_release(b);
			for (c = k; c + 1 < n; c++)
				chunks[c] = chunks[c + 1];
			n--;
		}
	}
	if (n == 1 && chunks[0].len == 0) {
		buf_adds(out, "(?!)");
	} else if (n == 1 && chunks[0].len == 1 && chunks[0].ptr[0] == '!') {
		buf_addch(out, '.');
	} else {
		buf_addch(out, '[');
		for (k = 0; k < n; k++) {
			for (c = 0; c < chunks[k].len; c++) {
				if (k == 0 && c == 0 && chunks[k].ptr[0] == '!')
					buf_addch(out, '^');
				else
					add_escaped(out, chunks[k].ptr[c]);
			}
			if (k + 1 < n)
				buf_addch(out, '-');
		}
		buf_addch(out, ']');
	}
	for (k = 0; k < n; k++)
		buf_release(&chunks[k]);
	free(chunks);
}

/*
 * The regex of the glob g[0..len) in out: the fixed text before the first
 * '*' as it is, then for each '*' followed by fixed text and another '*'
 * an atomic minimal match (?>.*?FIXED), and after the last '*' .*FIXED.
 */
static void glob_regex(struct buf *out, const char *g, size_t len)
{
	struct buf fixed = BUF_INIT(BUF_MAX_DEFAULT);
	int star = 0;
	size_t i = 0, j;

	buf_reset(out);
	while (i < len) {
		char c = g[i++];

		if (c == '*') {
			if (!star)
				buf_add(out, fixed.ptr, fixed.len);
			else if (fixed.len) {
				buf_adds(out, "(?>.*?");
				buf_add(out, fixed.ptr, fixed.len);
				buf_addch(out, ')');
			}
			buf_reset(&fixed);
			star = 1;
			while (i < len && g[i] == '*')
				i++;
			continue;
		}
		if (c == '?') {
			buf_addch(&fixed, '.');
			continue;
		}
		if (c != '[') {
			add_escaped(&fixed, c);
			continue;
		}
		j = i;
		if (j < len && g[j] == '!')
			j++;
		if (j < len && g[j] == ']')
			j++;
		while (j < len && g[j] != ']')
			j++;
		if (j >= len) {
			buf_adds(&fixed, "\\[");
			continue;
		}
		glob_class(&fixed, g, i, j);
		i = j + 1;
	}
	if (star)
		buf_adds(out, ".*");
	buf_add(out, fixed.ptr, fixed.len);
	buf_release(&fixed);
}

/* ---- regexes ---- */

/* Python's \Z is the very end: PCRE2's \z; a '[' in a class is a
 * literal. Other escapes stay. */
static void python_regex(struct buf *out, const char *p, size_t len)
{
	size_t i;
	int in_class = 0;

	buf_reset(out);
	for (i = 0; i < len; i++) {
		if (p[i] == '\\' && i + 1 < len) {
			buf_addch(out, '\\');
			buf_addch(out, !in_class && p[i + 1] == 'Z' ? 'z' : p[i + 1]);
			i++;
			continue;
		}
		if (p[i] == '[' && !in_class) {
			in_class = 1;
			buf_addch(out, p[i]);
			/* a ']' (after a '^') first in a class is a literal */
			if (i + 1 < len && p[i + 1] == '^')
				buf_addch(out, p[++i]);
			if (i + 1 < len && p[i + 1] == ']')
				buf_addch(out, p[++i]);
			continue;
		}
		if (p[i] == ']')
			in_class = 0;
		/* a '[' in a class is itself in Python's re, never the start
		 * of a POSIX class ([:alpha:]) as in PCRE2 */
		if (p[i] == '[' && in_class)
			buf_addch(out, '\\');
		buf_addch(out, p[i]);
	}
}

static int is_ascii_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_ident(const char *p, size_t n)
{
	size_t i;

	if (!n || (p[0] >= '0' && p[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++)
		if (!is_ascii_letter(p[i]) && p[i] != '_' &&
		    !(p[i] >= '0' && p[i] <= '9') && (unsigned char)p[i] < 0x80)
			return 0;
	return 1;
}

static void add_piece(struct expr *x, size_t at, size_t n, int group)
{
	x->pieces = xrealloc(x->pieces, (x->npieces + 1) * sizeof(*x->pieces));
	x->pieces[x->npieces].off = at;
	x->pieces[x->npieces].n = n;
	x->pieces[x->npieces].group = group;
	x->npieces++;
}

/* Ends the literal run started at *from (offsets into x->lit). */
static void flush_lit(struct expr *x, size_t *from)
{
	if (x->lit.len > *from)
		add_piece(x, *from, x->lit.len - *from, -1);
	*from = x->lit.len;
}

/* A group reference to a group the pattern has. */
static int add_group(struct replace_set *s, struct expr *x, size_t *from,
		     uint32_t ngroups, unsigned long g, struct err *e)
{
	if (g > ngroups)
		return fail(e, s, x->line, "invalid group reference %lu in the "
			    "replacement (the regex has %u group%s)", g, ngroups,
			    ngroups == 1 ? "" : "s");
	flush_lit(x, from);
	add_piece(x, 0, 0, (int)g);
	return 0;
}

static int octal(char c)
{
	return c >= '0' && c <= '7';
}

static int digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses the replacement as Python's re does (re._parser.parse_template):
 * literal bytes into x->lit, pieces pointing into it. */
static int parse_template(struct replace_set *s, struct expr *x, struct err *e)
{
	static const char esc_from[] = "abfnrtv\\", esc_to[] = "\a\b\f\n\r\t\v\\";
	const char *p = x->repl, *end = p + x->repl_len;
	uint32_t ngroups = 0;
	size_t from = 0, i;

	pcre2_pattern_info(x->re, PCRE2_INFO_CAPTURECOUNT, &ngroups);
	buf_init(&x->lit, SIZE_MAX / 4);
	while (p < end) {
		char c;

		if (*p != '\\') {
			buf_addch(&x->lit, *p++);
			continue;
		}
		if (p + 1 == end)
			return fail(e, s, x->line, "bad escape (end of the "
				    "replacement)");
		c = p[1];
		p += 2;
		if (c == 'g') {
			const char *gt;
			unsigned long g = 0;
			int n;

			if (p == end || *p != '<')
				return fail(e, s, x->line, "missing < after \\g "
					    "in the replacement");
			gt = memchr(p, '>', (size_t)(end - p));
			if (!gt)
				return fail(e, s, x->line, "missing >, unterminated "
					    "name in the replacement");
			if (gt == p + 1)
				return fail(e, s, x->line, "missing group name in "
					    "the replacement");
			if (is_ident(p + 1, (size_t)(gt - p - 1))) {
				char *name = xmemdup(p + 1, (size_t)(gt - p - 1));

				n = pcre2_substring_number_from_name(x->re,
								     (PCRE2_SPTR)name);
				free(name);
				if (n < 0)
					return fail(e, s, x->line, "unknown group "
						    "name '%.*s' in the replacement",
						    (int)(gt - p - 1), p + 1);
				g = (unsigned long)n;
			} else {
				for (i = 1; p + i < gt; i++) {
					if (!digit(p[i]) || g > 1000)
						return fail(e, s, x->line, "bad character "
							    "in group name '%.*s' in the "
							    "replacement", (int)(gt - p - 1),
							    p + 1);
					g = g * 10 + (unsigned long)(p[i] - '0');
				}
			}
			if (add_group(s, x, &from, ngroups, g, e) < 0)
				return -1;
			p = gt + 1;
		} else if (c == '0') {
			unsigned v = 0;

			for (i = 0; i < 2 && p < end && octal(*p); i++)
				v = v * 8 + (unsigned)(*p++ - '0');
			buf_addch(&x->lit, (int)(v & 0xff));
		} else if (digit(c)) {
			unsigned long g = (unsigned long)(c - '0');

			if (p < end && digit(*p)) {
				if (octal(c) && octal(*p) && p + 1 < end && octal(p[1])) {
					unsigned v = (unsigned)(c - '0') * 64 +
						     (unsigned)(p[0] - '0') * 8 +
						     (unsigned)(p[1] - '0');
					if (v > 0377)
						return fail(e, s, x->line, "octal escape "
							    "\\%c%c%c outside of range "
							    "0-0o377 in the replacement",
							    c, p[0], p[1]);
					buf_addch(&x->lit, (int)v);
					p += 2;
					continue;
				}
				g = g * 10 + (unsigned long)(*p++ - '0');
			}
			if (add_group(s, x, &from, ngroups, g, e) < 0)
				return -1;
		} else {
			const char *k = strchr(esc_from, c);

			if (k && c) {
				buf_addch(&x->lit, esc_to[k - esc_from]);
			} else if (is_ascii_letter(c)) {
				return fail(e, s, x->line, "bad escape \\%c in the "
					    "replacement", c);
			} else {	/* kept as it is, backslash and all */
				buf_addch(&x->lit, '\\');
				buf_addch(&x->lit, c);
			}
		}
	}
	flush_lit(x, &from);
	return 0;
}

static int compile(struct replace_set *s, struct expr *x, const char *re,
		   size_t len, const char *what, struct err *e)
{
	pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
	PCRE2_UCHAR msg[256];
	PCRE2_SIZE off;
	int code;

	if (!cc)
		die("out of memory for a regex");
	/* Python's re: LF is the only newline, whatever PCRE2 was built with */
	pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
	/* Python's re: in multi-line mode '^' also matches after a newline
	 * that ends the text (PCRE2_ALT_CIRCUMFLEX) */
	x->re = pcre2_compile((PCRE2_SPTR)re, len, PCRE2_ALT_CIRCUMFLEX, &code,
			      &off, cc);
	pcre2_compile_context_free(cc);
	if (!x->re) {
		pcre2_get_error_message(code, msg, sizeof(msg));
		return fail(e, s, x->line, "bad %s: %s (at offset %zu of '%.*s')",
			    what, (const char *)msg, (size_t)off,
			    (int)(len > 200 ? 200 : len), re);
	}
	x->md = pcre2_match_data_create_from_pattern(x->re, NULL);
	if (!x->md)
		die("out of memory for a regex");
	/* best effort: without JIT it only runs slower */
	pcre2_jit_compile(x->re, PCRE2_JIT_COMPLETE);
	return parse_template(s, x, e);
}

/* A new expression of line (its text as written, its replacement). */
static struct expr *push(struct replace_set *s, size_t line, const char *text,
			 size_t text_len, const char *repl, size_t repl_len)
{
	struct expr *x;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	x = memset(&s->v[s->n++], 0, sizeof(*x));
	x->line = line;
	x->text = xmemdup(text, text_len);
	x->text_len = text_len;
	x->repl = xmemdup(repl, repl_len);
	x->repl_len = repl_len;
	return x;
}

/* Finds the last "==>" of p[0..n). */
static const char *last_arrow(const char *p, size_t n)
{
	const char *found = NULL, *q = p;

	while (n >= 3 && (q = memmem(p, n, "==>", 3))) {
		found = q;
		n -= (size_t)(q - p) + 1;
		p = q + 1;
	}
	return found;
}

static int parse_line(struct replace_set *s, const char *p, size_t n,
		      size_t line, struct buf *tmp, struct err *e)
{
	const char *arrow, *repl = REPLACE_DEFAULT, *line_p;
	size_t repl_len = strlen(REPLACE_DEFAULT), len = n;
	struct expr *x;
	int r;

	while (len && (p[len - 1] == '\r' || p[len - 1] == '\n'))
		len--;
	n = len;
	line_p = p;
	arrow = last_arrow(p, n);
	if (arrow) {
		repl = arrow + 3;
		repl_len = n - (size_t)(arrow - p) - 3;
		len = (size_t)(arrow - p);
	}
	if ((len >= 6 && !memcmp(p, "regex:", 6)) ||
	    (len >= 5 && !memcmp(p, "glob:", 5))) {
		int glob = p[0] == 'g';
		size_t skip = glob ? 5 : 6;

		if (len == skip)
			return fail(e, s, line, "empty %s", glob ? "glob:" : "regex:");
		if (glob)
			glob_regex(tmp, p + skip, len - skip);
		else
			python_regex(tmp, p + skip, len - skip);
		x = push(s, line, line_p, n, repl, repl_len);
		r = compile(s, x, tmp->ptr, tmp->len, glob ? "glob" : "regex", e);
		if (r < 0) {
			expr_release(x);
			s->n--;
		}
		return r;
	}
	if (len >= 8 && !memcmp(p, "literal:", 8)) {
		p += 8;
		len -= 8;
	}
	if (!len)
		return 0;	/* no expression (a blank line) */
	x = push(s, line, line_p, n, repl, repl_len);
	x->find = xmemdup(p, len);
	x->find_len = len;
	return 0;
}

int replace_parse(struct replace_set **out, const char *text, size_t len,
		  const char *name, struct err *e)
{
	struct replace_set *s = xcalloc(1, sizeof(*s));
	struct buf tmp = BUF_INIT(BUF_MAX_DEFAULT);
	const char *p = text, *end = text + len;
	size_t line = 0, i, k;
	struct expr *sorted;

	s->name = xstrdup(name);
	buf_init(&s->a, SIZE_MAX / 2);
	buf_init(&s->b, SIZE_MAX / 2);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		line++;
		if (parse_line(s, p, n, line, &tmp, e) < 0) {
			buf_release(&tmp);
			replace_free(s);
			return -1;
		}
		p += n + (nl != NULL);
	}
	buf_release(&tmp);
	/* literals first, then regexes, each in file order (filter-repo);
	 * order[] keeps the file order for replace_info */
	sorted = xcalloc(s->n ? s->n : 1, sizeof(*sorted));
	s->order = xcalloc(s->n ? s->n : 1, sizeof(*s->order));
	for (i = 0, k = 0; i < s->n; i++)
		if (!s->v[i].re)
			sorted[k] = s->v[i], s->order[i] = k++;
	for (i = 0; i < s->n; i++)
		if (s->v[i].re)
			sorted[k] = s->v[i], s->order[i] = k++;
	free(s->v);
	s->v = sorted;
	s->cap = s->n;
	*out = s;
	return 0;
}

int replace_load(struct replace_set **out, const char *path, struct err *e)
{
	struct buf text = BUF_INIT(REPLACE_MAX_FILE);
	char chunk[65536];
	size_t n;
	FILE *f = fopen(path, "rb");
	int r;

	if (!f)
		return err_errno(e, ERR_USAGE, "cannot read the expressions file %s",
				 path);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (buf_add(&text, chunk, n) < 0) {
			fclose(f);
			buf_release(&text);
			return err_set(e, ERR_USAGE, "%s: the expressions file is "
				       "larger than %zu MiB", path,
				       REPLACE_MAX_FILE >> 20);
		}
	}
	if (ferror(f)) {
		fclose(f);
		buf_release(&text);
		return err_errno(e, ERR_USAGE, "cannot read the expressions "
				 "file %s", path);
	}
	fclose(f);
	r = replace_parse(out, text.ptr, text.len, path, e);
	buf_release(&text);
	return r;
}

const char *replace_name(const struct replace_set *s)
{
	return s->name;
}

size_t replace_count(const struct replace_set *s)
{
	return s ? s->n : 0;
}

void replace_info(const struct replace_set *s, size_t i,
		  struct replace_info *out)
{
	const struct expr *x = &s->v[s->order[i]];

	out->line = x->line;
	out->text = x->text;
	out->len = x->text_len;
	out->replaced = x->replaced;
	out->changed = x->changed;
}

int replace_is_binary(const char *p, size_t len)
{
	return memchr(p, '\0', len < REPLACE_BINARY_PROBE ? len :
		      REPLACE_BINARY_PROBE) != NULL;
}

/* ---- applying ---- */

#define TOO_LARGE (-2)	/* the text would exceed its buffer's max */

/* Every occurrence of a literal, left to right (bytes.replace): 1 with
 * the text in out, 0 when none, TOO_LARGE. */
static int apply_literal(struct expr *x, const char *in, size_t len,
			 struct buf *out)
{
	const char *p = in, *end = in + len, *q;
	int r = 0;

	buf_reset(out);
	x->run = 0;
	while ((size_t)(end - p) >= x->find_len &&
	       (q = memmem(p, (size_t)(end - p), x->find, x->find_len))) {
		r |= buf_add(out, p, (size_t)(q - p));
		r |= buf_add(out, x->repl, x->repl_len);
		p = q + x->find_len;
		x->run++;
		if (r)
			return TOO_LARGE;
	}
	if (!x->run)
		return 0;
	return buf_add(out, p, (size_t)(end - p)) < 0 ? TOO_LARGE : 1;
}

/* The replacement of the match x->md holds, appended to out. */
static int expand(const struct expr *x, const char *in, struct buf *out)
{
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(x->md);
	size_t i;
	int r = 0;

	for (i = 0; i < x->npieces; i++) {
		const struct piece *pc = &x->pieces[i];
		size_t g = (size_t)pc->group;

		if (pc->group < 0)
			r |= buf_add(out, x->lit.ptr + pc->off, pc->n);
		else if (ov[2 * g] != PCRE2_UNSET && ov[2 * g + 1] >= ov[2 * g])
			r |= buf_add(out, in + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
	}
	return r;
}

/* Every match of a regex (re.sub): after an empty match the next one may
 * not be empty at the same place. 1, 0, TOO_LARGE, or -1 with e set. */
static int apply_regex(const struct replace_set *s, struct expr *x,
		       const char *in, size_t len, struct buf *out,
		       struct err *e)
{
	size_t pos = 0, last = 0;
	uint32_t opts = 0;
	int rc;

	buf_reset(out);
	x->run = 0;
	while (pos <= len) {
		PCRE2_SIZE *ov;

		rc = pcre2_match(x->re, (PCRE2_SPTR)in, len, pos, opts, x->md, NULL);
		if (rc == PCRE2_ERROR_NOMATCH)
			break;
		if (rc < 0) {
			PCRE2_UCHAR msg[256];

			pcre2_get_error_message(rc, msg, sizeof(msg));
			return err_set(e, ERR_IO, "%s:%zu: the regex failed: %s",
				       s->name, x->line, (const char *)msg);
		}
		ov = pcre2_get_ovector_pointer(x->md);
		if (ov[1] < ov[0] || ov[0] < last)	/* \K in a lookaround */
			return err_set(e, ERR_IO, "%s:%zu: the regex matched "
				       "backwards (\\K in a lookaround)", s->name,
				       x->line);
		if (buf_add(out, in + last, ov[0] - last) < 0 ||
		    expand(x, in, out) < 0)
			return TOO_LARGE;
		x->run++;
		last = pos = ov[1];
		opts = ov[0] == ov[1] ? PCRE2_NOTEMPTY_ATSTART : 0;
	}
	if (!x->run)
		return 0;
	return buf_add(out, in + last, len - last) < 0 ? TOO_LARGE : 1;
}

static void forget_runs(struct replace_set *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		s->v[i].run = 0;
}

int replace_apply(struct replace_set *s, const char *in, size_t len,
		  struct buf *out, struct err *e)
{
	const char *cur = in;
	size_t cur_len = len, i;
	struct buf *dst = &s->a;
	int changed = 0, r;

	/* the text between expressions obeys out's limit too: a file of
	 * literals whose replacements contain them grows it geometrically */
	s->a.max = s->b.max = out->max;
	for (i = 0; i < s->n; i++) {
		struct expr *x = &s->v[i];

		r = x->re ? apply_regex(s, x, cur, cur_len, dst, e) :
		    apply_literal(x, cur, cur_len, dst);
		if (r == TOO_LARGE)
			err_set(e, ERR_IO, "%s:%zu: the text replaced would be "
				"larger than %zu bytes", s->name, x->line, dst->max);
		if (r < 0) {
			forget_runs(s);
			return -1;
		}
		if (r == 0)
			continue;
		/* the text so far is in dst: the next expression writes to
		 * the other buffer */
		changed = 1;
		cur = dst->ptr;
		cur_len = dst->len;
		dst = dst == &s->a ? &s->b : &s->a;
	}
	if (!changed)
		return 0;
	if (buf_set(out, cur, cur_len) < 0) {
		forget_runs(s);
		return err_set(e, ERR_IO, "%s: the text replaced is larger than "
			       "%zu bytes", s->name, out->max);
	}
	for (i = 0; i < s->n; i++) {
		s->v[i].replaced += s->v[i].run;
		s->v[i].changed += s->v[i].run > 0;
	}
	forget_runs(s);
	return 1;
}
