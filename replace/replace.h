/*
 * replace.h - text replacement by an expressions file in git-filter-repo's
 * format (--replace-text and --replace-message of git filter-repo 2.38,
 * which tests/integration/replace_text.sh lets judge): the replace-text
 * rule action on blobs, --replace-message on commit and tag messages.
 *
 * The file. One expression per line (split at LF; every CR and LF at the
 * end of a line is dropped):
 *
 *   p455w0rd                    literal (the default): replaced by ***REMOVED***
 *   literal:foo==>bar           the literal foo replaced by bar
 *   regex:(\d{2})/(\d{2})==>\2.\1   a regex; \1, \g<1>, \g<name> in the replacement
 *   glob:pass*==>X              a glob (Python's fnmatch), made a regex
 *
 * `==>` splits the line at its LAST occurrence: what follows is the
 * replacement (default ***REMOVED***). A literal that is empty (a blank
 * line, `literal:`, `==>x`) is no expression and is skipped. There are no
 * comments: a line starting with `#` is a literal like any other, as
 * filter-repo reads it. An empty `regex:` or `glob:` is an error (git
 * filter-repo would take the word regex: or glob: itself as a literal).
 *
 * Regexes are PCRE2 in byte mode, no flags (as Python's re on bytes):
 * `.` does not match LF, `^`/`$` are the whole text's unless (?m) is
 * given; `\Z` means the very end (Python's; PCRE2's \z). A replacement of
 * a regex or glob is a Python template: \1 .. \99 and \g<N>, \g<name>
 * (an unset group gives nothing), \n \t \r \a \b \f \v \\, \0 and 3-digit
 * octal escapes; \ before another ASCII letter is an error, before
 * anything else it stays as it is. A literal's replacement is taken as
 * it is. A glob: `*` is `.*`, `?` is `.`, `[...]` and `[!...]` classes,
 * matched anywhere in the text (not across a LF, as filter-repo's).
 *
 * Applying: first every literal, in file order, then every regex and
 * glob, in file order, each on the text the previous one left; all the
 * non-overlapping matches, left to right (an empty match right after a
 * match counts, as in Python 3.7 and later).
 *
 * Errors are ERR_USAGE naming FILE:LINE. Counters (how many replacements
 * and how many texts each expression changed) live in the set, so a set
 * is not to be used from two threads at once.
 */
#ifndef MIGRATE_REPLACE_H
#define MIGRATE_REPLACE_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

#define REPLACE_DEFAULT "***REMOVED***"
/* A text with a NUL byte in its first this many bytes is binary (git
 * filter-repo's test: replace-text leaves it alone). */
#define REPLACE_BINARY_PROBE 8192
#define REPLACE_MAX_FILE ((size_t)16 << 20)

struct replace_set;

/*
 * Reads and parses the expressions file at path; *out is a new set the
 * caller frees with replace_free. -1 with ERR_USAGE naming the file (and
 * line), *out untouched.
 */
int replace_load(struct replace_set **out, const char *path, struct err *e);
/* The same for len bytes of text; name is used in messages. */
int replace_parse(struct replace_set **out, const char *text, size_t len,
		  const char *name, struct err *e);
void replace_free(struct replace_set *s);	/* NULL is fine */

/* The file's name as given (borrowed). */
const char *replace_name(const struct replace_set *s);

/* Expressions, in file order (skipped lines are none). */
size_t replace_count(const struct replace_set *s);
struct replace_info {
	size_t line;		/* 1-based */
	const char *text;	/* the line as written, without its end */
	size_t len;
	uint64_t replaced;	/* matches replaced so far */
	uint64_t changed;	/* texts it changed so far */
};
/* Expression i (borrowed; valid until the set changes). */
void replace_info(const struct replace_set *s, size_t i,
		  struct replace_info *out);

/* 1 when the text has a NUL byte in its first REPLACE_BINARY_PROBE
 * bytes. Cannot fail. */
int replace_is_binary(const char *p, size_t len);

/*
 * Applies every expression to the len bytes at in. Returns 1 when the
 * text changed, with the new text in out (replaced; its max bounds the
 * text between expressions too);
 * 0 when nothing matched (out untouched); -1 with e set (ERR_IO
 * naming FILE:LINE when a regex hits PCRE2's match limit, or when out
 * would exceed its max). Counters are updated only on success.
 */
int replace_apply(struct replace_set *s, const char *in, size_t len,
		  struct buf *out, struct err *e);

#endif
