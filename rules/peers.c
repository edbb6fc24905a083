/*
 * peers.c - the options of the peer tools that say what happens to files
 * (git lfs migrate import's --include, --exclude, --above; git
 * filter-repo's --strip-blobs-bigger-than, --path, --path-glob,
 * --path-regex, --paths-from-file, --invert-paths), each turned into the
 * rules it means, in the rule language, and added to a rule set under
 * the option's name (rules.h says the order and the meanings). git lfs
 * migrate import's --fixup is no rule: it adds a comment saying it, and
 * rewrite/blob/attrs.c does it, commit by commit.
 */
#include "rules/rules.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rules_peer_given(const struct rules_peer *p)
{
	return p->include || p->exclude || p->above || p->strip_bigger ||
	       p->n_paths || p->invert_paths || p->fixup;
}

/* git lfs migrate's sizes (its humanize.ParseBytes): digits with '.' and
 * ',' (commas ignored), then a unit in any case, blanks around it
 * allowed: b, kb mb gb tb pb (powers of 1000), kib ... pib (of 1024);
 * a bare number, which git lfs refuses, is bytes here. The value is cut
 * to whole bytes, as git lfs cuts it. 0, or -1 when s is not one. */
static int lfs_size(const char *s, uint64_t *out)
{
	static const struct { const char *name; uint64_t mul; } units[] = {
		{ "", 1 }, { "b", 1 }, { "kb", 1000ULL }, { "mb", 1000000ULL },
		{ "gb", 1000000000ULL }, { "tb", 1000000000000ULL },
		{ "pb", 1000000000000000ULL }, { "kib", 1ULL << 10 },
		{ "mib", 1ULL << 20 }, { "gib", 1ULL << 30 },
		{ "tib", 1ULL << 40 }, { "pib", 1ULL << 50 },
	};
	long double v = 0, scale = 1;
	int digits = 0, dot = 0;
	char unit[8];
	size_t i, n = 0;
	const char *p = s;

	for (; isdigit((unsigned char)*p) || *p == '.' || *p == ','; p++) {
		if (*p == ',')
			continue;
		if (*p == '.' && dot++)
			return -1;
		if (*p == '.')
			continue;
		digits++;
		if (dot)
			scale /= 10;
		v = dot ? v + (*p - '0') * scale : v * 10 + (*p - '0');
	}
	if (!digits)
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	for (; *p && *p != ' ' && *p != '\t'; p++) {
		if (n + 1 == sizeof(unit))
			return -1;
		unit[n++] = (char)tolower((unsigned char)*p);
	}
	unit[n] = '\0';
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p)
		return -1;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(unit, units[i].name))
			continue;
		v *= units[i].mul;
		if (v >= 18446744073709551615.0L)
			return -1;
		*out = (uint64_t)v;
		return 0;
	}
	return -1;
}

/* git filter-repo's: digits, then K, M or G (powers of 1024) or nothing. */
static int filter_repo_size(const char *s, uint64_t *out)
{
	size_t n = strlen(s);
	uint64_t mul = 1;

	if (n && strchr("KMG", s[n - 1])) {
		mul = s[n - 1] == 'K' ? 1ULL << 10 : s[n - 1] == 'M' ? 1ULL << 20 :
		      1ULL << 30;
		n--;
	}
	if (!n || strspn(s, "0123456789") != n ||
	    parse_u64(s, n, UINT64_MAX / mul, out) < 0)
		return -1;
	*out *= mul;
	return 0;
}

/* c as a PCRE2 literal. */
static void re_char(struct buf *out, unsigned char c)
{
	if (!isalnum(c) && c < 0x80 && c != '/' && c != '_')
		buf_addch(out, '\\');
	buf_addch(out, (char)c);
}

/* git filter-repo's --path P: P itself or a path below it (P ending
 * with '/': any path that starts with P), as a regex from the start. */
static void literal_re(struct buf *out, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		re_char(out, (unsigned char)p[i]);
	if (n && p[n - 1] != '/')
		buf_adds(out, "(?:/|$)");
}

/* Python's fnmatch.translate, without its end anchor: * and ? cross '/',
 * [!...] is a negated class, a '[' that does not close is itself. */
static void fnmatch_re(struct buf *out, const char *p, size_t n)
{
	size_t i = 0, j, k;

	buf_adds(out, "(?s:");
	while (i < n) {
		char c = p[i++];

		if (c == '*') {
			buf_adds(out, ".*");
		} else if (c == '?') {
			buf_addch(out, '.');
		} else if (c == '[') {
			j = i;
			if (j < n && p[j] == '!')
				j++;
			if (j < n && p[j] == ']')
				j++;
			while (j < n && p[j] != ']')
				j++;
			if (j >= n) {
				buf_adds(out, "\\[");
				continue;
			}
			buf_addch(out, '[');
			k = i;
			if (p[k] == '!') {
				buf_addch(out, '^');
				k++;
			} else if (p[k] == '^' || p[k] == '[') {
				buf_addch(out, '\\');
			}
			for (; k < j; k++) {
				if (p[k] == '\\')
					buf_addch(out, '\\');
				buf_addch(out, p[k]);
			}
			buf_addch(out, ']');
			i = j + 1;
		} else {
			re_char(out, (unsigned char)c);
		}
	}
	buf_addch(out, ')');
}

/* git filter-repo's --path-glob G: fnmatch of the whole path, or, when G
 * does not end with '*', of G/ * (G* when G ends with '/'): a directory's
 * files. */
static void glob_re(struct buf *out, const char *g, size_t n)
{
	buf_adds(out, "(?:");
	fnmatch_re(out, g, n);
	if (!n || g[n - 1] != '*') {
		struct buf ext = BUF_INIT(2 * RULES_MAX_LINE);

		buf_add(&ext, g, n);
		buf_adds(&ext, n && g[n - 1] == '/' ? "*" : "/*");
		buf_addch(out, '|');
		fnmatch_re(out, ext.ptr, ext.len);
		buf_release(&ext);
	}
	buf_adds(out, ")$");
}

/* One path selector as a regex: from the start (^) for a literal or a
 * glob; a regex is searched, as filter-repo does (re.search). */
static void selector_re(struct buf *out, enum rules_peer_kind kind,
			const char *v, size_t n)
{
	if (kind == RULES_PEER_REGEX) {
		buf_add(out, v, n);
		return;
	}
	buf_addch(out, '^');
	if (kind == RULES_PEER_GLOB)
		glob_re(out, v, n);
	else
		literal_re(out, v, n);
}

/* The same, inside ^(?!...): from the start for all. */
static void selector_ahead(struct buf *out, enum rules_peer_kind kind,
			   const char *v, size_t n)
{
	buf_adds(out, "(?:");
	if (kind == RULES_PEER_REGEX) {
		buf_adds(out, "(?s:.*?)(?:");
		buf_add(out, v, n);
		buf_addch(out, ')');
	} else if (kind == RULES_PEER_GLOB) {
		glob_re(out, v, n);
	} else {
		literal_re(out, v, n);
	}
	buf_addch(out, ')');
}

static const char *const kind_option[] = {
	[RULES_PEER_PATH] = "--path", [RULES_PEER_GLOB] = "--path-glob",
	[RULES_PEER_REGEX] = "--path-regex",
};

/* Adds text under name to set, and to all (after "# name"). */
static int add(struct rules *set, struct buf *all, const struct buf *text,
	       const char *name, struct err *e)
{
	if (!text->len)
		return 0;
	buf_printf(all, "# %s\n", name);
	buf_add(all, text->ptr, text->len);
	/* the keep-only rule is one line, as long as the paths make it */
	return rules_add_text(set, text->ptr, text->len, name, SIZE_MAX / 4, e);
}

/* A literal path of --path: no '.' or '..' component (filter-repo's
 * check). */
static int check_literal(const char *p, struct err *e)
{
	const char *s = p, *end;
	size_t n;

	for (; *s; s = *end ? end + 1 : end) {
		end = strchr(s, '/');
		if (!end)
			end = s + strlen(s);
		n = (size_t)(end - s);
		if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return err_set(e, ERR_USAGE, "--path: invalid path "
				       "component '%.*s' in '%s'", (int)n, s, p);
	}
	return 0;
}

/*
 * The selectors of the file at path (--paths-from-file): a line each,
 * "literal:" (the default), "glob:" or "regex:", blank lines and '#'
 * lines skipped. Each becomes a line of *rules (`re:... drop`, a blank
 * line for a skipped one: the lines are the file's), and is added to
 * ahead (with a '|' between) for the keep-only rule.
 */
static int from_file(const char *path, struct buf *rules, struct buf *ahead,
		     struct err *e)
{
	struct buf text = BUF_INIT(RULES_MAX_FILE), re = BUF_INIT(SIZE_MAX / 2);
	const char *s, *nl, *v;
	size_t n, line = 0;
	enum rules_peer_kind kind;
	int rc = file_read(path, &text, e);

	if (rc <= 0) {
		char why[sizeof(e->msg)];

		snprintf(why, sizeof(why), "%s", rc < 0 ? e->msg : "no such file");
		buf_release(&text);
		return err_set(e, ERR_USAGE, "--paths-from-file %s: %s", path, why);
	}
	rc = 0;
	for (s = text.ptr; rc == 0 && s < text.ptr + text.len; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(text.ptr + text.len - s));
		if (!nl)
			nl = text.ptr + text.len;
		n = (size_t)(nl - s);
		line++;
		while (n && (s[n - 1] == '\r' || s[n - 1] == '\n'))
			n--;
		if (!n || s[0] == '#') {
			buf_addch(rules, '\n');
			continue;
		}
		if (memmem(s, n, "==>", 3)) {
			rc = err_set(e, ERR_USAGE, "%s:%zu: '==>' renames a "
				     "path; migrate renames nothing (only git "
				     "filter-repo --paths-from-file does)", path,
				     line);
			break;
		}
		kind = RULES_PEER_PATH;
		v = s;
		if (n >= 6 && !memcmp(s, "regex:", 6)) {
			kind = RULES_PEER_REGEX;
			v = s + 6;
		} else if (n >= 5 && !memcmp(s, "glob:", 5)) {
			kind = RULES_PEER_GLOB;
			v = s + 5;
		} else if (n >= 8 && !memcmp(s, "literal:", 8)) {
			v = s + 8;
		}
		buf_reset(&re);
		selector_re(&re, kind, v, n - (size_t)(v - s));
		buf_adds(rules, "re:");
		rules_format_value(rules, re.ptr, re.len);
		buf_adds(rules, " drop\n");
		if (ahead->len)
			buf_addch(ahead, '|');
		selector_ahead(ahead, kind, v, n - (size_t)(v - s));
	}
	buf_release(&text);
	buf_release(&re);
	return rc;
}

/* The path options: in invert mode their drop rules, else one rule
 * dropping every path none of them selects. */
static int add_paths(struct rules *set, const struct rules_peer *p,
		     struct buf *all, struct err *e)
{
	struct buf text[3], ahead = BUF_INIT(SIZE_MAX / 2);
	struct buf re = BUF_INIT(SIZE_MAX / 2), file = BUF_INIT(SIZE_MAX / 2);
	struct buf line = BUF_INIT(SIZE_MAX / 2), names = BUF_INIT(4096);
	struct rules *check = NULL;
	size_t i, k;
	int rc = 0, seen[4] = { 0 };

	for (k = 0; k < 3; k++)
		buf_init(&text[k], SIZE_MAX / 2);
	/* the checks: each selector alone, named by its option (and its
	 * count) or by its file and line */
	rc = rules_parse(&check, "", 0, "(paths)", e);
	for (i = 0; rc == 0 && i < p->n_paths; i++) {
		enum rules_peer_kind kind = p->paths[i].kind;
		const char *v = p->paths[i].value;

		if (!seen[kind]++)
			buf_printf(&names, "%s%s", names.len ? ", " : "",
				   kind == RULES_PEER_FILE ? "--paths-from-file" :
				   kind_option[kind]);
		if (kind == RULES_PEER_FILE) {
			buf_reset(&file);
			rc = from_file(v, &file, &ahead, e);
			if (rc == 0 && p->invert_paths)
				rc = add(set, all, &file, v, e);
			else if (rc == 0)
				rc = rules_add_text(check, file.ptr, file.len, v, 0, e);
			continue;
		}
		if (kind == RULES_PEER_PATH && (rc = check_literal(v, e)) < 0)
			break;
		buf_reset(&re);
		selector_re(&re, kind, v, strlen(v));
		buf_adds(&text[kind], "re:");
		rules_format_value(&text[kind], re.ptr, re.len);
		buf_adds(&text[kind], " drop\n");
		if (ahead.len)
			buf_addch(&ahead, '|');
		selector_ahead(&ahead, kind, v, strlen(v));
	}
	for (k = 0; rc == 0 && k < 3; k++)
		rc = p->invert_paths ? add(set, all, &text[k], kind_option[k], e) :
		     rules_add_text(check, text[k].ptr, text[k].len,
				    kind_option[k], 0, e);
	/* a file of comments selects nothing: keeping nothing is not what
	 * was meant */
	if (rc == 0 && !ahead.len)
		rc = err_set(e, ERR_USAGE, "%s: no path given (the file has "
			     "only comments and blank lines)", names.ptr);
	if (rc == 0 && !p->invert_paths) {
		buf_reset(&re);
		buf_adds(&re, "^(?!");
		buf_add(&re, ahead.ptr, ahead.len);
		buf_addch(&re, ')');
		buf_adds(&line, "re:");
		rules_format_value(&line, re.ptr, re.len);
		buf_adds(&line, " drop\n");
		rc = add(set, all, &line, names.ptr, e);
	}
	rules_free(check);
	for (k = 0; k < 3; k++)
		buf_release(&text[k]);
	buf_release(&ahead);
	buf_release(&re);
	buf_release(&file);
	buf_release(&line);
	buf_release(&names);
	return rc;
}

/* --include / --exclude: the comma-separated patterns of v, a line each
 * with what (an action, a size before it), into out; how many. */
static size_t patterns(struct buf *out, const char *v, const char *what)
{
	const char *s = v, *end;
	size_t n = 0, a, b;

	for (; s; s = *end ? end + 1 : NULL) {
		end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		for (a = 0; s + a < end && (s[a] == ' ' || s[a] == '\t'); a++)
			;
		for (b = (size_t)(end - s); b > a && (s[b - 1] == ' ' ||
						      s[b - 1] == '\t'); b--)
			;
		if (b == a)
			continue;
		rules_format_value(out, s + a, b - a);
		buf_printf(out, " %s\n", what);
		n++;
	}
	return n;
}

int rules_add_peer(struct rules *set, const struct rules_peer *p,
		   struct buf *all, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2), what = BUF_INIT(64);
	uint64_t size;
	int rc = 0;

	if (p->invert_paths && !p->n_paths)
		return err_set(e, ERR_USAGE, "--invert-paths: no path to invert "
			       "(--path, --path-glob, --path-regex or "
			       "--paths-from-file)");
	if (p->fixup && (p->include || p->exclude || p->above))
		return err_set(e, ERR_USAGE, "--fixup: takes no %s (it reads "
			       "what to convert from each commit's "
			       ".gitattributes; git lfs migrate import refuses "
			       "it with --fixup too)", p->include ? "--include" :
			       p->exclude ? "--exclude" : "--above");
	if (p->fixup) {
		buf_adds(&text, "# per commit: the files its own .gitattributes "
			 "mark filter=lfs, not LFS\n# pointers yet, become LFS "
			 "pointers (the .gitattributes stay as they are), but\n"
			 "# those a rule decides\n");
		rc = add(set, all, &text, "--fixup", e);
		buf_reset(&text);
	}
	if (rc == 0 && p->strip_bigger) {
		if (filter_repo_size(p->strip_bigger, &size) < 0) {
			rc = err_set(e, ERR_USAGE, "--strip-blobs-bigger-than: "
				     "expected a number of bytes, with K, M or "
				     "G after it (as git filter-repo: 5M), got "
				     "'%s'", p->strip_bigger);
		} else {
			buf_printf(&text, "* size>%llu drop\n",
				   (unsigned long long)size);
			rc = add(set, all, &text, "--strip-blobs-bigger-than", e);
		}
	}
	if (rc == 0 && p->n_paths)
		rc = add_paths(set, p, all, e);
	buf_adds(&what, "lfs");
	if (rc == 0 && p->above) {
		if (lfs_size(p->above, &size) < 0)
			rc = err_set(e, ERR_USAGE, "--above: expected a size as "
				     "git lfs migrate takes it (1000, 20 MB, "
				     "1.5GiB, 3 TiB), got '%s'", p->above);
		buf_reset(&what);
		buf_printf(&what, "size>=%llu lfs", (unsigned long long)size);
	}
	if (rc == 0 && p->exclude) {
		buf_reset(&text);
		patterns(&text, p->exclude, "keep");
		rc = add(set, all, &text, "--exclude", e);
	}
	if (rc == 0 && (p->include || p->exclude || p->above)) {
		buf_reset(&text);
		/* no --include: every file, as git lfs migrate import */
		if (!p->include || !patterns(&text, p->include, what.ptr))
			buf_printf(&text, "* %s\n", what.ptr);
		rc = add(set, all, &text, p->include ? "--include" :
			 p->above ? "--above" : "--exclude (every other file)", e);
	}
	buf_release(&text);
	buf_release(&what);
	return rc;
}
