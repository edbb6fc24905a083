/*
 * rules.c - the rule-file parser, the rule set and first-match lookup.
 * The language is described in rules.h; globs live in glob.c.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "rules/rules.h"

#include <errno.h>
#include <pcre2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "rules/glob.h"

/* the actions' options, by index: split's, annex's, replace-text's (its
 * FILE is kept as the option "replace-text") */
enum { OPT_RECORD, OPT_INTO, OPT_HEAD, OPT_MODE, OPT_BACKEND, OPT_TEXT,
       OPT_BINARY, OPT_COUNT };
static const char *const opt_names[OPT_COUNT] = { "record", "into", "head",
						  "mode", "backend",
						  "replace-text", "binary" };

static const char *const action_names[] = {
	[RULES_LFS] = "lfs",
	[RULES_ANNEX] = "annex",
	[RULES_DROP] = "drop",
	[RULES_KEEP] = "keep",
	[RULES_SPLIT] = "split",
	[RULES_UNLFS] = "unlfs",
	[RULES_REPLACE_TEXT] = "replace-text",
};
#define ACTION_COUNT (sizeof(action_names) / sizeof(action_names[0]))

#define PATH_SHOWN 200	/* bytes of a path quoted in a message */

struct rule {
	size_t line;
	const char *file;	/* the file it was read from (the set owns it) */
	enum rules_action action;
	char *pattern;		/* unquoted, without re: */
	size_t pattern_len;
	int is_regex;
	int is_blob;		/* blob:<id>: matches that blob, no path */
	unsigned char blob[RULES_BLOB_RAW];
	struct rules_glob glob;	/* when !is_regex and !is_blob */
	pcre2_code *re;		/* when is_regex */
	pcre2_match_data *md;	/* the one mutable part: see rules.h */
	int has_size;
	int has_lo, has_hi;
	uint64_t lo, hi;	/* inclusive */
	char *opt[OPT_COUNT];	/* NULL when absent */
	size_t opt_len[OPT_COUNT];
};

/*
 * Regex rules matched together: up to BLOCK_RULES of them in one PCRE2
 * alternation, which says at once whether any of them matches a path
 * (most paths match none). Only when it does are they tried one by one,
 * in file order, so the first rule still wins and errors still name it.
 */
#define BLOCK_RULES 256

struct block {
	pcre2_code *re;
	pcre2_match_data *md;
	uint64_t gen;		/* hit is for the path of this generation */
	int hit;
};

/*
 * The literal-prefix index: a regex rule `^LIT...` can only match a path
 * that starts with LIT (at most PFX_MAX bytes of it are kept). Rules are
 * kept by that prefix, each list in file order; a path tries the lists of
 * its own prefixes and the rules that have no prefix (globs, other
 * regexes), merged by rule index so the first rule still wins.
 */
#define PFX_MAX 32

struct pfx {
	UT_hash_handle hh;
	size_t *idx;		/* rule indices, ascending */
	size_t n, cap;
	char key[PFX_MAX];
};

/* blob:<id> rules by id (the first rule of an id wins). */
struct blob_rule {
	unsigned char id[RULES_BLOB_RAW];
	size_t idx;
	UT_hash_handle hh;
};

struct rules {
	char *name;
	char **names;		/* the other files rules came from */
	size_t nnames;
	struct blob_rule *blobs;
	size_t nblobs;
	struct rule *v;
	size_t n, cap;
	int any_size;
	struct block *blk;
	size_t nblk;
	size_t *blk_of;		/* per rule: its block, or NO_BLOCK */
	uint64_t gen;		/* one per path matched */
	int combine;		/* 0: one by one (rules_match_each) */
	struct pfx *pfx;	/* uthash by prefix; NULL: no index */
	size_t nlens;		/* distinct prefix lengths, in no order */
	size_t lens[PFX_MAX];
	size_t *rest;		/* rules without a prefix, ascending */
	size_t nrest;
};

#define NO_BLOCK SIZE_MAX

/* ---- cursor over one line ---- */

struct cur {
	const char *name;
	const char *s;	/* the line, without its LF or final CR */
	size_t len;
	size_t pos;
	size_t line;
	struct err *e;
};

/* Sets "NAME:LINE:COL: msg" (off is 0-based in the line) and returns -1. */
__attribute__((format(printf, 3, 4)))
static int fail(const struct cur *c, size_t off, const char *fmt, ...)
{
	char msg[800];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(c->e, ERR_USAGE, "%s:%zu:%zu: %s", c->name, c->line,
		       off + 1, msg);
}

static int is_blank(int ch)
{
	return ch == ' ' || ch == '\t';
}

static void skip_blanks(struct cur *c)
{
	while (c->pos < c->len && is_blank(c->s[c->pos]))
		c->pos++;
}

/* After skip_blanks: nothing left but maybe a comment. */
static int at_end(const struct cur *c)
{
	return c->pos == c->len || c->s[c->pos] == '#';
}

static size_t word_end(const struct cur *c, size_t from)
{
	while (from < c->len && !is_blank(c->s[from]))
		from++;
	return from;
}

/* Whether the word at [a, b) equals the NUL-terminated s. */
static int word_is(const struct cur *c, size_t a, size_t b, const char *s)
{
	return b - a == strlen(s) && !memcmp(c->s + a, s, b - a);
}

/* ---- values: 'literal', "with \" and \\", or bare ---- */

static int after_quote(const struct cur *c, size_t q)
{
	if (c->pos < c->len && !is_blank(c->s[c->pos]))
		return fail(c, c->pos, "unexpected '%c' after the quoted value "
			    "opened at column %zu", c->s[c->pos], q + 1);
	return 0;
}

static int read_single(struct cur *c, struct buf *out)
{
	size_t q = c->pos;
	const char *end = memchr(c->s + q + 1, '\'', c->len - q - 1);

	if (!end)
		return fail(c, q, "unterminated single quote");
	buf_set(out, c->s + q + 1, (size_t)(end - c->s) - q - 1);
	c->pos = (size_t)(end - c->s) + 1;
	return after_quote(c, q);
}

static int read_double(struct cur *c, struct buf *out)
{
	size_t q = c->pos, i;

	buf_reset(out);
	for (i = q + 1; i < c->len && c->s[i] != '"'; i++) {
		if (c->s[i] == '\\' && i + 1 < c->len &&
		    (c->s[i + 1] == '"' || c->s[i + 1] == '\\'))
			i++;	/* the only two escapes; other '\' stay */
		buf_addch(out, c->s[i]);
	}
	if (i == c->len)
		return fail(c, q, "unterminated double quote");
	c->pos = i + 1;
	return after_quote(c, q);
}

/*
 * Reads a value at c->pos into out (NUL-terminated) and leaves the cursor
 * after it. The line is at most RULES_MAX_LINE bytes, so out cannot fill.
 */
static int read_value(struct cur *c, struct buf *out)
{
	size_t end;

	if (c->s[c->pos] == '\'')
		return read_single(c, out);
	if (c->s[c->pos] == '"')
		return read_double(c, out);
	end = word_end(c, c->pos);
	buf_set(out, c->s + c->pos, end - c->pos);
	c->pos = end;
	return 0;
}

/* ---- sizes ---- */

struct unit {
	const char *name;
	uint64_t mul;
};

static const struct unit units[] = {
	{ "", 1 }, { "B", 1 },
	{ "kB", 1000ULL }, { "MB", 1000000ULL }, { "GB", 1000000000ULL },
	{ "TB", 1000000000000ULL },
	{ "KiB", 1ULL << 10 }, { "MiB", 1ULL << 20 }, { "GiB", 1ULL << 30 },
	{ "TiB", 1ULL << 40 },
};

/* The unit named by the len bytes at s ("" is bytes), or NULL. */
static const struct unit *find_unit(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == len && !memcmp(units[i].name, s, len))
			return &units[i];
	return NULL;
}

/* Parses N[unit] at [a, b) into *out. */
static int parse_amount(const struct cur *c, size_t a, size_t b, uint64_t *out)
{
	const struct unit *u;
	size_t d = a;
	uint64_t n;

	while (d < b && c->s[d] >= '0' && c->s[d] <= '9')
		d++;
	if (d == a)
		return fail(c, a, "expected a number of bytes after the comparison");
	if (parse_u64(c->s + a, d - a, UINT64_MAX, &n) < 0)
		return fail(c, a, "size too large");
	if (d < b && (c->s[d] == '.' || c->s[d] == ','))
		return fail(c, d, "sizes are whole numbers (write 1536KiB, not 1.5MiB)");
	u = find_unit(c->s + d, b - d);
	if (!u)
		return fail(c, d, "unknown size unit '%.*s' (expected B, kB, MB, "
			    "GB, TB, KiB, MiB, GiB or TiB)", (int)(b - d), c->s + d);
	if (__builtin_mul_overflow(n, u->mul, out))
		return fail(c, a, "size too large");
	return 0;
}

int rules_parse_size(const char *s, size_t len, uint64_t *out)
{
	const struct unit *u;
	size_t d = 0;
	uint64_t n;

	while (d < len && s[d] >= '0' && s[d] <= '9')
		d++;
	if (d == 0 || parse_u64(s, d, UINT64_MAX, &n) < 0)
		return -1;
	u = find_unit(s + d, len - d);
	if (!u || __builtin_mul_overflow(n, u->mul, out))
		return -1;
	return 0;
}

/* Records a bound; each rule has at most one lower and one upper. */
static int add_bound(const struct cur *c, size_t a, struct rule *r,
		     int lower, uint64_t v)
{
	if (lower ? r->has_lo : r->has_hi)
		return fail(c, a, "second %s bound on size in one rule",
			    lower ? "lower" : "upper");
	if (lower) {
		r->has_lo = 1;
		r->lo = v;
	} else {
		r->has_hi = 1;
		r->hi = v;
	}
	if (r->lo > r->hi)
		return fail(c, a, "size conditions exclude every size");
	r->has_size = 1;
	return 0;
}

/* Whether the word at [a, b) is meant as a size condition. */
static int looks_like_size(const struct cur *c, size_t a, size_t b)
{
	return b - a >= 4 && !memcmp(c->s + a, "size", 4) &&
	       (b - a == 4 || memchr("<>=!", c->s[a + 4], 4));
}

/* size>N size>=N size<N size<=N at [a, b). */
static int parse_size(const struct cur *c, size_t a, size_t b, struct rule *r)
{
	size_t o = a + 4;
	int gt, eq;
	uint64_t v = 0;

	if (o == b || (c->s[o] != '<' && c->s[o] != '>'))
		return fail(c, a, "expected size>N, size>=N, size<N or size<=N "
			    "(no blanks inside)");
	gt = c->s[o] == '>';
	eq = o + 1 < b && c->s[o + 1] == '=';
	o += 1 + (size_t)eq;
	if (parse_amount(c, o, b, &v) < 0)
		return -1;
	if (gt && !eq && v == UINT64_MAX)
		return fail(c, a, "no size is larger than %llu",
			    (unsigned long long)v);
	if (!gt && !eq && v == 0)
		return fail(c, a, "no size is smaller than 0");
	if (gt)
		return add_bound(c, a, r, 1, eq ? v : v + 1);
	return add_bound(c, a, r, 0, eq ? v : v - 1);
}

/* ---- patterns ---- */

/*
 * Compiles a PCRE2 pattern; col is where its text starts in the line,
 * used with PCRE2's error offset (exact unless "..." escapes came first).
 */
static pcre2_code *compile_re(const struct cur *c, size_t col,
			      const struct buf *re, const char *what)
{
	int code;
	PCRE2_SIZE off;
	PCRE2_UCHAR msg[256];
	pcre2_code *p;

	if (re->len == 0) {
		fail(c, col, "empty regex in %s", what);
		return NULL;
	}
	p = pcre2_compile((PCRE2_SPTR)re->ptr, re->len, PCRE2_DOLLAR_ENDONLY,
			  &code, &off, NULL);
	if (!p) {
		pcre2_get_error_message(code, msg, sizeof(msg));
		fail(c, col + off, "bad regex in %s: %s (at offset %zu)", what,
		     (const char *)msg, (size_t)off);
	}
	return p;
}

static int action_index(const struct cur *c, size_t a, size_t b)
{
	size_t i;

	for (i = 0; i < ACTION_COUNT; i++)
		if (word_is(c, a, b, action_names[i]))
			return (int)i;
	return -1;
}

/*
 * A first word that reads as a condition or an action while nothing after
 * it does means the pattern was left out; say so rather than "missing
 * action". A file really named like that can be quoted.
 */
static int check_missing_pattern(const struct cur *c)
{
	size_t a = c->pos, b = word_end(c, a), n;
	struct cur rest = *c;

	if (looks_like_size(c, a, b))
		return fail(c, a, "missing pattern before the size condition "
			    "(use '*' for every file)");
	if (action_index(c, a, b) < 0)
		return 0;
	rest.pos = b;
	skip_blanks(&rest);
	n = word_end(&rest, rest.pos);
	if (at_end(&rest) || (action_index(&rest, rest.pos, n) < 0 &&
			      !looks_like_size(&rest, rest.pos, n)))
		return fail(c, a, "missing pattern before action '%.*s' (quote "
			    "the pattern if a file is named so)",
			    (int)(b - a), c->s + a);
	return 0;
}

static int parse_glob(const struct cur *c, size_t col, struct rule *r)
{
	size_t bad;
	const char *msg;

	if (rules_glob_init(&r->glob, r->pattern, r->pattern_len, &bad, &msg) < 0)
		return fail(c, col + bad, "%s", msg);
	return 0;
}

/* The 40 hex digits of a blob id (either case) into id; -1 when not. */
static int blob_id_parse(unsigned char *id, const char *hex, size_t len)
{
	if (len != 2 * RULES_BLOB_RAW)
		return -1;
	return hex_decode(hex, RULES_BLOB_RAW, id);
}

/* blob:<id>: the pattern is kept as written, in lower case. */
static int parse_blob_id(const struct cur *c, size_t col, struct rule *r)
{
	size_t i;

	if (blob_id_parse(r->blob, r->pattern + 5, r->pattern_len - 5) < 0)
		return fail(c, col + 5, "blob: needs a blob id of 40 hex digits");
	for (i = 5; i < r->pattern_len; i++)
		r->pattern[i] = (char)(r->pattern[i] | 0x20);
	r->is_blob = 1;
	return 0;
}

static int parse_pattern(struct cur *c, struct rule *r, struct buf *tmp)
{
	size_t col;

	if (check_missing_pattern(c) < 0)
		return -1;
	r->is_regex = c->len - c->pos >= 3 && !memcmp(c->s + c->pos, "re:", 3);
	if (r->is_regex)
		c->pos += 3;
	col = c->pos + (c->pos < c->len && (c->s[c->pos] == '\'' ||
					    c->s[c->pos] == '"'));
	if (c->pos == c->len || is_blank(c->s[c->pos])) {
		buf_reset(tmp);
	} else if (read_value(c, tmp) < 0) {
		return -1;
	}
	r->pattern = xmemdup(tmp->ptr, tmp->len);
	r->pattern_len = tmp->len;
	if (!r->is_regex && tmp->len >= 5 && !memcmp(tmp->ptr, "blob:", 5))
		return parse_blob_id(c, col, r);
	if (!r->is_regex)
		return parse_glob(c, col, r);
	r->re = compile_re(c, col, tmp, "pattern");
	if (!r->re)
		return -1;
	r->md = pcre2_match_data_create_from_pattern(r->re, NULL);
	if (!r->md)
		return fail(c, col, "out of memory for the regex");
	/* best effort: a regex without JIT works, only slower */
	pcre2_jit_compile(r->re, PCRE2_JIT_COMPLETE);
	return 0;
}

/* ---- options ---- */

/* record= must compile; split/ compiles it again for its own use. */
static int check_record(const struct cur *c, size_t col, const struct buf *v)
{
	pcre2_code *p;

	col += c->s[col] == '\'' || c->s[col] == '"';
	p = compile_re(c, col, v, "record=");
	if (!p)
		return -1;
	pcre2_code_free(p);
	return 0;
}

static int parse_option(struct cur *c, struct rule *r, struct buf *tmp)
{
	size_t a = c->pos, b = word_end(c, a), k;
	const char *eq = memchr(c->s + a, '=', b - a);
	int i;

	if (looks_like_size(c, a, b))
		return fail(c, a, "size conditions go before the action");
	if (!eq)
		return fail(c, a, "unexpected '%.*s' after the action (options "
			    "are key=value)", (int)(b - a), c->s + a);
	k = (size_t)(eq - c->s);
	if (r->action != RULES_SPLIT && r->action != RULES_ANNEX &&
	    r->action != RULES_REPLACE_TEXT)
		return fail(c, a, "action '%s' takes no options",
			    action_names[r->action]);
	for (i = 0; i < OPT_COUNT; i++)
		if (word_is(c, a, k, opt_names[i]))
			break;
	if (r->action == RULES_SPLIT && i > OPT_HEAD)
		i = OPT_COUNT;
	if (r->action == RULES_ANNEX && (i < OPT_MODE || i > OPT_BACKEND))
		i = OPT_COUNT;
	if (r->action == RULES_REPLACE_TEXT && i != OPT_BINARY)
		i = OPT_COUNT;
	if (i == OPT_COUNT && r->action == RULES_ANNEX)
		return fail(c, a, "unknown option '%.*s' for annex (expected "
			    "mode or backend)", (int)(k - a), c->s + a);
	if (i == OPT_COUNT && r->action == RULES_REPLACE_TEXT)
		return fail(c, a, "unknown option '%.*s' for replace-text "
			    "(expected binary)", (int)(k - a), c->s + a);
	if (i == OPT_COUNT)
		return fail(c, a, "unknown option '%.*s' for split (expected "
			    "record, into or head)", (int)(k - a), c->s + a);
	if (r->opt[i])
		return fail(c, a, "option '%s' given twice", opt_names[i]);
	c->pos = k + 1;
	if (c->pos == c->len || is_blank(c->s[c->pos]))
		return fail(c, c->pos, "missing value after '%s='", opt_names[i]);
	if (read_value(c, tmp) < 0)
		return -1;
	if (tmp->len == 0 || memchr(tmp->ptr, '\0', tmp->len))
		return fail(c, k + 1, "empty value for '%s'", opt_names[i]);
	if (i == OPT_RECORD && check_record(c, k + 1, tmp) < 0)
		return -1;
	if (i == OPT_MODE && strcmp(tmp->ptr, "unlocked") &&
	    strcmp(tmp->ptr, "locked"))
		return fail(c, k + 1, "mode must be unlocked or locked, not '%s'",
			    tmp->ptr);
	if (i == OPT_BINARY && strcmp(tmp->ptr, "yes") && strcmp(tmp->ptr, "no"))
		return fail(c, k + 1, "binary must be yes or no, not '%s'",
			    tmp->ptr);
	if (i == OPT_BACKEND && strcmp(tmp->ptr, "SHA256E") &&
	    strcmp(tmp->ptr, "SHA256"))
		return fail(c, k + 1, "backend must be SHA256E or SHA256, not "
			    "'%s'", tmp->ptr);
	r->opt[i] = xmemdup(tmp->ptr, tmp->len);
	r->opt_len[i] = tmp->len;
	return 0;
}

/* split: record= and into= are required. */
static int check_split(const struct cur *c, size_t act, const struct rule *r)
{
	if (!r->opt[OPT_RECORD] || !r->opt[OPT_INTO])
		return fail(c, act, "split needs record='REGEX' and into='PATH'");
	return 0;
}

/* ---- one line ---- */

/* replace-text=FILE: the FILE (quoted when it has a blank) is kept as
 * the option "replace-text"; rewrite/blob reads it. */
static int parse_replace_text(struct cur *c, struct rule *r, struct buf *tmp)
{
	size_t v = c->pos + 13;

	r->action = RULES_REPLACE_TEXT;
	c->pos = v;
	if (c->pos == c->len || is_blank(c->s[c->pos]))
		return fail(c, v, "missing FILE after 'replace-text=' (the "
			    "expressions file)");
	if (read_value(c, tmp) < 0)
		return -1;
	if (tmp->len == 0 || memchr(tmp->ptr, '\0', tmp->len))
		return fail(c, v, "empty FILE for 'replace-text='");
	r->opt[OPT_TEXT] = xmemdup(tmp->ptr, tmp->len);
	r->opt_len[OPT_TEXT] = tmp->len;
	return 0;
}

static int parse_action(struct cur *c, struct rule *r, size_t *act,
			struct buf *tmp)
{
	size_t a, b;
	int i;

	for (;;) {
		skip_blanks(c);
		if (at_end(c))
			return fail(c, c->pos, "missing action after the pattern "
				    "(expected lfs, unlfs, annex, drop, keep, split "
				    "or replace-text=FILE)");
		a = c->pos;
		b = word_end(c, a);
		if (!looks_like_size(c, a, b))
			break;
		if (parse_size(c, a, b, r) < 0)
			return -1;
		c->pos = b;
	}
	*act = a;
	if (b - a >= 13 && !memcmp(c->s + a, "replace-text=", 13))
		return parse_replace_text(c, r, tmp);
	i = action_index(c, a, b);
	if (i < 0 || i == RULES_REPLACE_TEXT)
		return fail(c, a, "unknown action '%.*s' (expected lfs, unlfs, "
			    "annex, drop, keep, split or replace-text=FILE)",
			    (int)(b - a), c->s + a);
	r->action = (enum rules_action)i;
	c->pos = b;
	return 0;
}

static void rule_release(struct rule *r)
{
	int i;

	free(r->pattern);
	rules_glob_release(&r->glob);
	pcre2_match_data_free(r->md);
	pcre2_code_free(r->re);
	for (i = 0; i < OPT_COUNT; i++)
		free(r->opt[i]);
	memset(r, 0, sizeof(*r));
}

/* Parses the rule on a non-empty line into r; r is released on failure. */
static int parse_rule(struct cur *c, struct rule *r, struct buf *tmp)
{
	size_t act = 0;

	memset(r, 0, sizeof(*r));
	r->line = c->line;
	r->hi = UINT64_MAX;
	if (parse_pattern(c, r, tmp) < 0 || parse_action(c, r, &act, tmp) < 0)
		goto fail;
	for (;;) {
		skip_blanks(c);
		if (at_end(c))
			break;
		if (parse_option(c, r, tmp) < 0)
			goto fail;
	}
	if (r->action == RULES_SPLIT && check_split(c, act, r) < 0)
		goto fail;
	/* a pointer's size says nothing of its file's: unlfs takes every
	 * pointer its pattern names */
	if (r->action == RULES_UNLFS && r->has_size) {
		fail(c, act, "unlfs takes no size condition");
		goto fail;
	}
	if (r->is_blob && (r->action != RULES_DROP || r->has_size)) {
		fail(c, act, "a blob:<id> rule drops that blob wherever it is: "
		     "its action is drop, without a size condition");
		goto fail;
	}
	return 0;
fail:
	rule_release(r);
	return -1;
}

static void rules_push(struct rules *set, const struct rule *r)
{
	if (set->n == set->cap) {
		set->cap = set->cap ? set->cap * 2 : 16;
		set->v = xrealloc(set->v, set->cap * sizeof(*set->v));
	}
	set->v[set->n++] = *r;
	if (!r->file)
		set->v[set->n - 1].file = set->name;
	set->any_size |= r->has_size;
	if (r->is_blob) {
		struct blob_rule *b;

		HASH_FIND(hh, set->blobs, r->blob, RULES_BLOB_RAW, b);
		if (b)
			return;
		b = xcalloc(1, sizeof(*b));
		memcpy(b->id, r->blob, RULES_BLOB_RAW);
		b->idx = set->n - 1;
		HASH_ADD(hh, set->blobs, id, RULES_BLOB_RAW, b);
		set->nblobs++;
	}
}

/* Handles one line: blank, comment or rule. */
static int parse_line(struct rules *set, struct cur *c, struct buf *tmp,
		      size_t max_line)
{
	struct rule r;
	const char *nul;

	if (c->len && c->s[c->len - 1] == '\r')
		c->len--;
	if (c->len > max_line)
		return fail(c, 0, "line longer than %zu bytes", max_line);
	nul = memchr(c->s, '\0', c->len);
	if (nul)
		return fail(c, (size_t)(nul - c->s), "NUL byte in rule file");
	c->pos = 0;
	skip_blanks(c);
	if (at_end(c))
		return 0;
	if (parse_rule(c, &r, tmp) < 0)
		return -1;
	rules_push(set, &r);
	return 0;
}

/* ---- regex rules matched together ---- */

/*
 * Whether a regex means the same inside "(?:" ")|" next to others:
 * nothing that counts groups (back references, recursion, \10 that would
 * turn into one), names groups, changes the whole pattern ((* verbs,
 * (?x whose # comment would eat the rest, \Q running to the end), or
 * calls out. Conservative: a false "no" only costs speed.
 */
static int combinable(const struct rule *r)
{
	const char *p = r->pattern, *end = p + r->pattern_len;
	uint32_t refs = 0;

	if (pcre2_pattern_info(r->re, PCRE2_INFO_BACKREFMAX, &refs) != 0 || refs)
		return 0;
	for (; p < end; p++) {
		if (*p == '\\' && p + 1 < end) {
			p++;
			if ((*p >= '1' && *p <= '9') || strchr("gkKQ", *p))
				return 0;
		} else if (*p == '(' && p + 1 < end && (p[1] == '*' ||
			   (p[1] == '?' && p + 2 < end &&
			    (strchr("R&P|+0123456789C'", p[2]) ||
			     (p[2] == '-' && p + 3 < end && p[3] >= '0' && p[3] <= '9') ||
			     (p[2] == '<' && p + 3 < end && p[3] != '=' && p[3] != '!'))))) {
			return 0;
		} else if (*p == '(' && p + 1 < end && p[1] == '?') {
			const char *q = p + 2;

			while (q < end && (strchr("^-", *q) || (*q >= 'a' && *q <= 'z') ||
					   (*q >= 'A' && *q <= 'Z')))
				if (*q++ == 'x')
					return 0;
		}
	}
	return 1;
}

/* Compiles the alternation of rules v[idx[0..n)]; -1 when PCRE2 refuses it. */
static int block_build(struct rules *set, const size_t *idx, size_t n)
{
	struct buf pat = BUF_INIT(SIZE_MAX / 2);
	struct block *b;
	int code;
	PCRE2_SIZE off;
	size_t i;

	for (i = 0; i < n; i++) {
		buf_adds(&pat, i ? "|(?:" : "(?:");
		buf_add(&pat, set->v[idx[i]].pattern, set->v[idx[i]].pattern_len);
		buf_addch(&pat, ')');
	}
	set->blk = xrealloc(set->blk, (set->nblk + 1) * sizeof(*set->blk));
	b = &set->blk[set->nblk];
	memset(b, 0, sizeof(*b));
	b->re = pcre2_compile((PCRE2_SPTR)pat.ptr, pat.len, PCRE2_DOLLAR_ENDONLY,
			      &code, &off, NULL);
	buf_release(&pat);
	if (!b->re)
		return -1;
	b->md = pcre2_match_data_create(1, NULL);
	if (!b->md) {
		pcre2_code_free(b->re);
		return -1;
	}
	pcre2_jit_compile(b->re, PCRE2_JIT_COMPLETE);
	for (i = 0; i < n; i++)
		set->blk_of[idx[i]] = set->nblk;
	set->nblk++;
	return 0;
}

/*
 * Skips the class that opens at p[*i] ('['), leaving *i on its ']'.
 * -1 when it does not end.
 */
static int skip_class(const char *p, size_t n, size_t *i)
{
	size_t j = *i + 1;

	if (j < n && p[j] == '^')
		j++;
	if (j < n && p[j] == ']')
		j++;
	while (j < n) {
		if (p[j] == '\\') {
			if (j + 1 < n && p[j + 1] == 'c')
				return -1;
			j += 2;
		} else if (p[j] == '[' && j + 1 < n && strchr(":.=", p[j + 1])) {
			/* [:name:] (PCRE2 reads anything else as plain [) */
			size_t k = j + 2;

			if (p[j + 1] != ':')
				return -1;
			if (k < n && p[k] == '^')
				k++;
			while (k < n && ((p[k] >= 'a' && p[k] <= 'z') ||
					 (p[k] >= 'A' && p[k] <= 'Z')))
				k++;
			if (k + 1 >= n || p[k] != ':' || p[k + 1] != ']')
				return -1;
			j = k + 2;
		} else if (p[j] == ']') {
			*i = j;
			return 0;
		} else {
			j++;
		}
	}
	return -1;
}

/* Whether the regex has no `|` outside parentheses (conservative). */
static int no_top_alternation(const char *p, size_t n)
{
	size_t i, depth = 0;

	for (i = 0; i < n; i++) {
		if (p[i] == '\\') {
			if (i + 1 < n && p[i + 1] == 'c')
				return 0;	/* \c( is a character */
			i++;
		} else if (p[i] == '[') {
			if (skip_class(p, n, &i) < 0)
				return 0;
		} else if (p[i] == '(') {
			depth++;
		} else if (p[i] == ')') {
			if (!depth)
				return 0;
			depth--;
		} else if (p[i] == '|' && !depth) {
			return 0;
		}
	}
	return 1;
}

static int is_literal(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || (ch && strchr("/_-,:@%=~!'\"<>&;", ch));
}

/*
 * The length of the literal text every path the regex matches starts with
 * (0 when none is known), at most PFX_MAX. Conservative: only `^` then
 * plain characters, the last one dropped (a quantifier, or \E then one,
 * may follow it), in a pattern PCRE2 calls anchored, without a top-level
 * `|` and combinable (so no (?x, \Q, verbs); the text starts at pattern+1.
 */
static size_t literal_prefix(const struct rule *r)
{
	const char *p = r->pattern;
	size_t n = r->pattern_len, i;
	uint32_t opts = 0;

	if (n < 3 || p[0] != '^' || !combinable(r) || !no_top_alternation(p, n))
		return 0;
	if (pcre2_pattern_info(r->re, PCRE2_INFO_ALLOPTIONS, &opts) != 0 ||
	    !(opts & PCRE2_ANCHORED) ||
	    (opts & (PCRE2_CASELESS | PCRE2_EXTENDED | PCRE2_MULTILINE)))
		return 0;
	for (i = 1; i < n && is_literal((unsigned char)p[i]); i++)
		;
	if (i < 3)
		return 0;
	return i - 2 < PFX_MAX ? i - 2 : PFX_MAX;
}

/* Appends x to the growing array *v of *n entries (room for *cap). */
static void push_index(size_t **v, size_t *n, size_t *cap, size_t x)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 4;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = x;
}

/* Puts rule i in the literal-prefix index (see struct pfx), after the
 * rules before it; set->rest has room for it. */
static void index_rule(struct rules *set, size_t i)
{
	const struct rule *r = &set->v[i];
	struct pfx *x;
	size_t j, k;

	if (r->is_blob)
		return;	/* never a path's candidate */
	k = r->is_regex ? literal_prefix(r) : 0;
	if (!k) {
		set->rest[set->nrest++] = i;
		return;
	}
	HASH_FIND(hh, set->pfx, r->pattern + 1, k, x);
	if (!x) {
		x = xcalloc(1, sizeof(*x));
		memcpy(x->key, r->pattern + 1, k);
		HASH_ADD(hh, set->pfx, key[0], k, x);
		for (j = 0; j < set->nlens && set->lens[j] != k; j++)
			;
		if (j == set->nlens)
			set->lens[set->nlens++] = k;
	}
	push_index(&x->idx, &x->n, &x->cap, i);
}

/* Builds the literal-prefix index of the regex rules (see struct pfx). */
static void index_prefixes(struct rules *set)
{
	size_t i;

	set->rest = xmalloc((set->n + 1) * sizeof(*set->rest));
	for (i = 0; i < set->n; i++)
		index_rule(set, i);
}

static void free_prefixes(struct rules *set)
{
	struct pfx *x, *tmp;

	HASH_ITER(hh, set->pfx, x, tmp) {
		HASH_DEL(set->pfx, x);
		free(x->idx);
		free(x);
	}
	free(set->rest);
}

/* The rules a path may match, in file order: see struct pfx. */
struct cands {
	const size_t *v[PFX_MAX + 1];
	size_t n[PFX_MAX + 1];
	size_t k;
	size_t next, all;	/* without the index: every rule */
	int linear;
};

static void cands_start(struct cands *c, const struct rules *set,
			const char *path, size_t len)
{
	struct pfx *x;
	size_t j;

	c->k = 0;
	c->next = 0;
	c->all = set->n;
	c->linear = !set->combine || !set->pfx;
	if (c->linear)
		return;
	c->v[c->k] = set->rest;
	c->n[c->k++] = set->nrest;
	for (j = 0; j < set->nlens; j++) {
		if (set->lens[j] > len)
			continue;
		HASH_FIND(hh, set->pfx, path, set->lens[j], x);
		if (x) {
			c->v[c->k] = x->idx;
			c->n[c->k++] = x->n;
		}
	}
}

/* The next candidate rule's index, or SIZE_MAX at the end. */
static size_t cands_next(struct cands *c)
{
	size_t j, best = SIZE_MAX, at = 0;

	if (c->linear)
		return c->next < c->all ? c->next++ : SIZE_MAX;
	for (j = 0; j < c->k; j++)
		if (c->n[j] && c->v[j][0] < best) {
			best = c->v[j][0];
			at = j;
		}
	if (best != SIZE_MAX) {
		c->v[at]++;
		c->n[at]--;
	}
	return best;
}

/*
 * Groups the combinable regex rules of list (ascending rule indices) into
 * blocks, in that order; idx has room for BLOCK_RULES.
 */
static void combine_list(struct rules *set, const size_t *list, size_t len,
			 size_t *idx)
{
	size_t n = 0, i;

	for (i = 0; i <= len; i++) {
		if (i < len && set->v[list[i]].is_regex &&
		    combinable(&set->v[list[i]]))
			idx[n++] = list[i];
		if (n && (n == BLOCK_RULES || i == len)) {
			if (n > 1)
				(void)block_build(set, idx, n); /* refused: one by one */
			n = 0;
		}
	}
}

/*
 * Builds the blocks after index_prefixes: the rules without a prefix
 * together, and each prefix's rules together, since a path tries a whole
 * list or none of it (a block mixing lists would be run for one rule).
 */
static void combine_regexes(struct rules *set)
{
	size_t *idx = xmalloc((BLOCK_RULES + 1) * sizeof(*idx)), i;
	struct pfx *x, *tmp;

	set->combine = 1;
	set->blk_of = xmalloc((set->n + 1) * sizeof(*set->blk_of));
	for (i = 0; i < set->n; i++)
		set->blk_of[i] = NO_BLOCK;
	combine_list(set, set->rest, set->nrest, idx);
	HASH_ITER(hh, set->pfx, x, tmp)
		combine_list(set, x->idx, x->n, idx);
	free(idx);
}

int rules_parse(struct rules **out, const char *text, size_t len,
		const char *name, struct err *e)
{
	struct rules *set;
	struct buf tmp = BUF_INIT(RULES_MAX_LINE + 1);
	struct cur c = { name, text, 0, 0, 0, e };
	size_t at = 0;
	const char *nl;

	if (len > RULES_MAX_FILE)
		return err_set(e, ERR_USAGE, "%s: rule file larger than %zu bytes",
			       name, RULES_MAX_FILE);
	set = xcalloc(1, sizeof(*set));
	set->name = xstrdup(name);
	while (at < len) {
		nl = memchr(text + at, '\n', len - at);
		c.s = text + at;
		c.len = nl ? (size_t)(nl - c.s) : len - at;
		c.line++;
		at += c.len + (nl != NULL);
		if (parse_line(set, &c, &tmp, RULES_MAX_LINE) < 0) {
			buf_release(&tmp);
			rules_free(set);
			return -1;
		}
	}
	buf_release(&tmp);
	index_prefixes(set);
	combine_regexes(set);
	*out = set;
	return 0;
}

/* The whole file at path into text (RULES_MAX_FILE at most); what names
 * it in messages. 0, or -1 with ERR_USAGE. */
static int read_text(const char *path, const char *what, struct buf *text,
		     struct err *e)
{
	char chunk[8192];
	size_t n;
	FILE *f = fopen(path, "rb");
	int r = 0;

	if (!f)
		return err_errno(e, ERR_USAGE, "cannot open %s %s", what, path);
	while (r == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_add(text, chunk, n) < 0)
			r = err_set(e, ERR_USAGE, "%s: %s larger than %zu bytes",
				    path, what, RULES_MAX_FILE);
	if (r == 0 && ferror(f))
		r = err_errno(e, ERR_USAGE, "cannot read %s %s", what, path);
	fclose(f);
	return r;
}

int rules_load(struct rules **out, const char *path, struct err *e)
{
	struct buf text = BUF_INIT(RULES_MAX_FILE);
	int r = read_text(path, "rule file", &text, e);

	if (r == 0)
		r = rules_parse(out, text.ptr, text.len, path, e);
	buf_release(&text);
	return r;
}

int rules_load_blob_ids(struct rules *r, const char *path, struct err *e)
{
	struct buf text = BUF_INIT(RULES_MAX_FILE);
	int rc = read_text(path, "blob id file", &text, e);

	if (rc == 0)
		rc = rules_add_blob_ids(r, text.ptr, text.len, path, e);
	buf_release(&text);
	return rc;
}

void rules_free(struct rules *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		rule_release(&r->v[i]);
	for (i = 0; i < r->nblk; i++) {
		pcre2_match_data_free(r->blk[i].md);
		pcre2_code_free(r->blk[i].re);
	}
	free(r->blk);
	free(r->blk_of);
	free_prefixes(r);
	{
		struct blob_rule *b, *t;

		HASH_ITER(hh, r->blobs, b, t) {
			HASH_DEL(r->blobs, b);
			free(b);
		}
	}
	free(r->v);
	free(r->name);
	while (r->nnames)
		free(r->names[--r->nnames]);
	free(r->names);
	free(r);
}

/* ---- matching ---- */

/* 1 match, 0 no match, -1 regex failure (e set). */
static int pattern_matches(struct rules *set, const struct rule *r,
			   const char *path, size_t len, struct err *e)
{
	PCRE2_UCHAR msg[256];
	int rc;

	if (r->is_blob)
		return 0;	/* rules_match_blob's */
	if (!r->is_regex)
		return rules_glob_match(&r->glob, path, len);
	if (set->combine && set->blk_of[r - set->v] != NO_BLOCK) {
		struct block *b = &set->blk[set->blk_of[r - set->v]];

		if (b->gen != set->gen) {
			b->gen = set->gen;
			/* an error (match limit) leaves it to the rule alone */
			b->hit = pcre2_match(b->re, (PCRE2_SPTR)path, len, 0, 0,
					     b->md, NULL) != PCRE2_ERROR_NOMATCH;
		}
		if (!b->hit)
			return 0;
	}
	rc = pcre2_match(r->re, (PCRE2_SPTR)path, len, 0, 0, r->md, NULL);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	pcre2_get_error_message(rc, msg, sizeof(msg));
	return err_set(e, ERR_USAGE, "%s:%zu: regex failed on path '%.*s': %s",
		       r->file, r->line, (int)(len < PATH_SHOWN ? len : PATH_SHOWN),
		       path, (const char *)msg);
}

static int size_ok(const struct rule *r, uint64_t size)
{
	return size >= r->lo && size <= r->hi;
}

/* The rule set's one mutable part besides match data (see rules.h). */
static struct rules *next_path(const struct rules *set)
{
	struct rules *s = (struct rules *)set;

	s->gen++;
	return s;
}

int rules_match(const struct rule **out, const struct rules *cset,
		const char *path, size_t len, uint64_t size, struct err *e)
{
	struct rules *set = next_path(cset);
	struct cands c;
	size_t i;
	int m;

	cands_start(&c, set, path, len);
	while ((i = cands_next(&c)) != SIZE_MAX) {
		if (!size_ok(&set->v[i], size))
			continue;
		m = pattern_matches(set, &set->v[i], path, len, e);
		if (m < 0)
			return -1;
		if (m) {
			*out = &set->v[i];
			return 0;
		}
	}
	*out = NULL;
	return 0;
}

int rules_match_unsized(const struct rule **out, const struct rules *cset,
			const char *path, size_t len, struct err *e)
{
	struct rules *set = next_path(cset);
	struct cands c;
	size_t i;
	int m;

	cands_start(&c, set, path, len);
	while ((i = cands_next(&c)) != SIZE_MAX) {
		m = pattern_matches(set, &set->v[i], path, len, e);
		if (m < 0)
			return -1;
		if (!m)
			continue;
		if (set->v[i].has_size)
			return RULES_NEED_SIZE;
		*out = &set->v[i];
		return 0;
	}
	*out = NULL;
	return 0;
}

/* ---- blobs by id ---- */

const struct rule *rules_match_blob(const struct rules *r,
				    const unsigned char *id)
{
	struct blob_rule *b;

	if (!r || !r->blobs)
		return NULL;
	HASH_FIND(hh, r->blobs, id, RULES_BLOB_RAW, b);
	return b ? &r->v[b->idx] : NULL;
}

size_t rules_blob_count(const struct rules *r)
{
	return r ? r->nblobs : 0;
}

int rules_rule_is_blob(const struct rule *rule)
{
	return rule->is_blob;
}

int rules_add_blob_ids(struct rules *set, const char *text, size_t len,
		       const char *name, struct err *e)
{
	size_t at = 0, line = 0, i;
	const char *nl, *file;

	set->names = xrealloc(set->names, (set->nnames + 1) * sizeof(*set->names));
	file = set->names[set->nnames++] = xstrdup(name);
	while (at < len) {
		const char *s = text + at;
		size_t n;

		nl = memchr(s, '\n', len - at);
		n = nl ? (size_t)(nl - s) : len - at;
		at += n + (nl != NULL);
		line++;
		for (i = 0; i < n;) {
			struct rule r;
			size_t a;

			while (i < n && strchr(" \t\r", s[i]))
				i++;
			if (i == n || s[i] == '#')
				break;
			for (a = i; i < n && !strchr(" \t\r", s[i]); i++)
				;
			memset(&r, 0, sizeof(r));
			r.hi = UINT64_MAX;
			r.line = line;
			r.file = file;
			r.action = RULES_DROP;
			r.is_blob = 1;
			if (blob_id_parse(r.blob, s + a, i - a) < 0)
				return err_set(e, ERR_USAGE, "%s:%zu:%zu: expected a "
					       "blob id of 40 hex digits, got '%.*s'",
					       name, line, a + 1,
					       (int)(i - a < 64 ? i - a : 64), s + a);
			r.pattern_len = 5 + i - a;
			r.pattern = xmalloc(r.pattern_len + 1);
			memcpy(r.pattern, "blob:", 5);
			for (size_t k = 0; k < i - a; k++)
				r.pattern[5 + k] = (char)(s[a + k] | 0x20);
			r.pattern[r.pattern_len] = '\0';
			rules_push(set, &r);
		}
	}
	/* the path index and the regex blocks stay as they are: id rules
	 * are never a path's candidates */
	return 0;
}

/* ---- accessors ---- */

size_t rules_count(const struct rules *r)
{
	return r->n;
}

const struct rule *rules_get(const struct rules *r, size_t i)
{
	return i < r->n ? &r->v[i] : NULL;
}

int rules_have_size(const struct rules *r)
{
	return r->any_size;
}

size_t rules_rule_line(const struct rule *rule)
{
	return rule->line;
}

const char *rules_rule_file(const struct rule *rule)
{
	return rule->file;
}

enum rules_action rules_rule_action(const struct rule *rule)
{
	return rule->action;
}

const char *rules_action_name(enum rules_action a)
{
	return (size_t)a < ACTION_COUNT ? action_names[a] : "?";
}

const char *rules_rule_pattern(const struct rule *rule, size_t *len)
{
	if (len)
		*len = rule->pattern_len;
	return rule->pattern;
}

int rules_rule_is_regex(const struct rule *rule)
{
	return rule->is_regex;
}

int rules_rule_size(const struct rule *rule, uint64_t *lo, uint64_t *hi)
{
	if (!rule->has_size)
		return 0;
	if (lo)
		*lo = rule->lo;
	if (hi)
		*hi = rule->hi;
	return 1;
}

const char *rules_rule_option(const struct rule *rule, const char *key,
			      size_t *len)
{
	int i;

	for (i = 0; i < OPT_COUNT; i++) {
		if (strcmp(key, opt_names[i]) || !rule->opt[i])
			continue;
		if (len)
			*len = rule->opt_len[i];
		return rule->opt[i];
	}
	return NULL;
}

int rules_option_path(const struct rule *rule, const char *key,
		      struct buf *out)
{
	const char *file = rules_rule_option(rule, key, NULL);
	const char *slash = rule->file ? strrchr(rule->file, '/') : NULL;

	buf_reset(out);
	if (!file)
		return 0;
	if (file[0] != '/' && slash)
		buf_add(out, rule->file, (size_t)(slash - rule->file) + 1);
	buf_adds(out, file);
	return 1;
}

/*
 * Ends the pattern that starts at out->ptr[old] with " attrs\n" and checks
 * the line's length. -1 (out restored) when git would ignore the line or
 * out is full; *too_long tells which.
 */
static int attr_finish(struct buf *out, size_t old, const char *attrs,
		       int *too_long)
{
	int r = buf_addch(out, ' ');

	if (r == 0)
		r = buf_adds(out, attrs);
	*too_long = r == 0 && out->len - old >= RULES_ATTR_LINE_MAX;
	if (r == 0 && !*too_long)
		r = buf_addch(out, '\n');
	if (r == 0 && !*too_long)
		return 0;
	out->len = old;
	out->ptr[old] = '\0';
	return -1;
}

int rules_rule_attr_line(struct buf *out, const struct rule *rule,
			 const char *attrs, struct err *e)
{
	size_t old = out->len;
	int too_long = 0;

	if (rule->is_regex || rule->is_blob)
		return err_set(e, ERR_USAGE, "line %zu: a %s rule has no "
			       ".gitattributes pattern", rule->line,
			       rule->is_blob ? "blob:<id>" : "regex");
	if (rules_glob_attr(out, &rule->glob) == 0 &&
	    attr_finish(out, old, attrs, &too_long) == 0)
		return 0;
	if (too_long)
		return err_set(e, ERR_USAGE, "line %zu: the pattern is too long "
			       "for .gitattributes (git ignores lines of %d "
			       "bytes or more)", rule->line, RULES_ATTR_LINE_MAX);
	return err_set(e, ERR_USAGE, "line %zu: .gitattributes pattern too long",
		       rule->line);
}

int rules_attr_path_line(struct buf *out, const char *path, size_t len,
			 const char *attrs, struct err *e)
{
	size_t old = out->len;
	int too_long = 0;

	if (len == 0 || memchr(path, '\0', len))
		return err_set(e, ERR_USAGE, "no .gitattributes line for an "
			       "empty path or one with a NUL byte");
	if (rules_glob_attr_path(out, path, len) == 0 &&
	    attr_finish(out, old, attrs, &too_long) == 0)
		return 0;
	if (too_long)
		return err_set(e, ERR_USAGE, "path '%.*s'%s (%zu bytes) is too "
			       "long for a .gitattributes line: git ignores "
			       "lines of %d bytes or more",
			       (int)(len < PATH_SHOWN ? len : PATH_SHOWN), path,
			       len > PATH_SHOWN ? "..." : "", len,
			       RULES_ATTR_LINE_MAX);
	return err_set(e, ERR_USAGE, "path too long for a .gitattributes "
		       "line: '%.*s'", (int)(len < PATH_SHOWN ? len : PATH_SHOWN),
		       path);
}

int rules_match_each(const struct rule **out, const struct rules *cset,
		     const char *path, size_t len, uint64_t size, struct err *e)
{
	struct rules *set = (struct rules *)cset;
	int saved = set->combine, r;

	set->combine = 0;
	r = rules_match(out, set, path, len, size, e);
	set->combine = saved;
	return r;
}

/* ---- rules added to a set, and a rule written back ---- */

/* The rules from `from` on, added after the index was built, into it:
 * each is its own candidate, in no regex block (they are few: the
 * blocks of the rules before them are not compiled again). */
static void index_added(struct rules *set, size_t from)
{
	size_t i;

	set->rest = xrealloc(set->rest, (set->n + 1) * sizeof(*set->rest));
	set->blk_of = xrealloc(set->blk_of, (set->n + 1) * sizeof(*set->blk_of));
	for (i = from; i < set->n; i++) {
		set->blk_of[i] = NO_BLOCK;
		index_rule(set, i);
	}
}

int rules_add_text(struct rules *set, const char *text, size_t len,
		   const char *name, size_t max_line, struct err *e)
{
	struct cur c = { NULL, text, 0, 0, 0, e };
	struct buf tmp;
	size_t at = 0, before, first = set->n;
	const char *nl;
	int r = 0;

	if (len > RULES_MAX_FILE)
		return err_set(e, ERR_USAGE, "%s: rules larger than %zu bytes",
			       name, RULES_MAX_FILE);
	if (!max_line)
		max_line = RULES_MAX_LINE;
	buf_init(&tmp, max_line + 1);
	set->names = xrealloc(set->names, (set->nnames + 1) * sizeof(*set->names));
	c.name = set->names[set->nnames++] = xstrdup(name);
	while (r == 0 && at < len) {
		nl = memchr(text + at, '\n', len - at);
		c.s = text + at;
		c.len = nl ? (size_t)(nl - c.s) : len - at;
		c.line++;
		at += c.len + (nl != NULL);
		before = set->n;
		r = parse_line(set, &c, &tmp, max_line);
		if (set->n > before)
			set->v[set->n - 1].file = c.name;
	}
	buf_release(&tmp);
	index_added(set, first);
	return r;
}

/* A value as the parser reads it back: bare when it can be, else
 * '...', else "..." with \" and \\. */
static void format_value(struct buf *out, const char *s, size_t n,
			 int quote);

void rules_format_value(struct buf *out, const char *s, size_t n)
{
	format_value(out, s, n, 0);
}

void rules_quote_value(struct buf *out, const char *s, size_t n)
{
	format_value(out, s, n, 1);
}

static void format_value(struct buf *out, const char *s, size_t n,
			 int quote)
{
	size_t i;
	int bare = !quote && n > 0 && s[0] != '\'' && s[0] != '"' && s[0] != '#';

	/* a CR would be taken for a CRLF line's at the end of a line */
	for (i = 0; bare && i < n; i++)
		bare = !is_blank(s[i]) && s[i] != '\r';
	if (bare) {
		buf_add(out, s, n);
		return;
	}
	if (!memchr(s, '\'', n)) {
		buf_addch(out, '\'');
		buf_add(out, s, n);
		buf_addch(out, '\'');
		return;
	}
	buf_addch(out, '"');
	for (i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			buf_addch(out, '\\');
		buf_addch(out, s[i]);
	}
	buf_addch(out, '"');
}

void rules_rule_format(struct buf *out, const struct rule *rule)
{
	int i;

	if (rule->is_regex)
		buf_adds(out, "re:");
	/* a glob whose text starts like a regex is quoted, or it would be
	 * read as one */
	format_value(out, rule->pattern, rule->pattern_len, !rule->is_regex &&
		     rule->pattern_len >= 3 && !memcmp(rule->pattern, "re:", 3));
	if (rule->has_lo)
		buf_printf(out, " size>=%llu", (unsigned long long)rule->lo);
	if (rule->has_hi)
		buf_printf(out, " size<=%llu", (unsigned long long)rule->hi);
	buf_addch(out, ' ');
	if (rule->action == RULES_REPLACE_TEXT) {
		buf_adds(out, "replace-text=");
		format_value(out, rule->opt[OPT_TEXT], rule->opt_len[OPT_TEXT], 0);
	} else {
		buf_adds(out, rules_action_name(rule->action));
	}
	for (i = 0; i < OPT_COUNT; i++) {
		if (i == OPT_TEXT || !rule->opt[i])
			continue;
		buf_printf(out, " %s=", opt_names[i]);
		format_value(out, rule->opt[i], rule->opt_len[i], 0);
	}
}
