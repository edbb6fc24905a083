/*
 * fastimport.c - the checks git fast-import makes on names and idents
 * (git 2.39 builtin/fast-import.c parse_ident, validate_raw_date,
 * new_branch; refs.c check_refname_format), so that a stream migrate
 * accepts is one fast-import accepts.
 */
#include "stream.h"

#include <string.h>

/* refs.c refname_disposition: 0 ok, 1 end of component, 2 '.', 3 '{',
 * 4 forbidden (controls, SP, ':', '?', '[', '\\', '^', '~', DEL), 5 '*' */
static unsigned char disposition(unsigned char ch)
{
	if (ch == '/')
		return 1;
	if (ch < 0x20 || ch == 0x7f || strchr(" :?[\\^~", ch))
		return 4;
	if (ch == '.')
		return 2;
	if (ch == '{')
		return 3;
	if (ch == '*')
		return 5;
	return 0;
}

int stream_refname_ok(const char *name, size_t len)
{
	size_t i = 0;

	if (len == 1 && name[0] == '@')
		return 0;
	for (;;) {
		size_t start = i;
		unsigned char last = 0;

		for (; i < len && name[i] != '/'; i++) {
			unsigned char ch = (unsigned char)name[i];
			switch (disposition(ch)) {
			case 2:
				if (last == '.')
					return 0;	/* ".." */
				break;
			case 3:
				if (last == '@')
					return 0;	/* "@{" */
				break;
			case 4: case 5:
				return 0;
			default:
				break;
			}
			last = ch;
		}
		if (i == start || name[start] == '.')
			return 0;	/* empty, or starts with '.' */
		if (i - start >= 5 && !memcmp(name + i - 5, ".lock", 5))
			return 0;
		if (i == len)
			return name[i - 1] != '.';
		i++;
	}
}

/* strtoul(3) as validate_raw_date uses it: leading white space, a sign,
 * digits; *end stays at p when there are no digits. 0, or -1 on ERANGE. */
static int c_strtoul(const char *p, const char *lim, const char **end,
		     uint64_t *v)
{
	const char *q = p;
	int over = 0, neg = 0;

	*v = 0;
	while (q < lim && (*q == ' ' || (*q >= '\t' && *q <= '\r')))
		q++;
	if (q < lim && (*q == '+' || *q == '-'))
		neg = *q++ == '-';
	if (q == lim || *q < '0' || *q > '9') {
		*end = p;
		return 0;
	}
	for (; q < lim && *q >= '0' && *q <= '9'; q++) {
		unsigned d = (unsigned)(*q - '0');
		if (*v > (UINT64_MAX - d) / 10)
			over = 1;
		*v = *v * 10 + d;
	}
	*end = q;
	if (neg)
		*v = 0 - *v;	/* strtoul negates in unsigned arithmetic */
	return over ? -1 : 0;
}

int stream_raw_date_ok(const char *p, size_t n, int strict)
{
	const char *lim = p + n, *end;
	uint64_t v;

	if (c_strtoul(p, lim, &end, &v) < 0 || end == p || end == lim || *end != ' ')
		return 0;
	p = end + 1;
	if (p == lim || (*p != '-' && *p != '+'))
		return 0;
	if (c_strtoul(p + 1, lim, &end, &v) < 0 || end == p + 1 || end != lim)
		return 0;
	return !(strict && v > 1400);
}

/* strcspn over n bytes */
static size_t strcspn_n(const char *p, size_t n, const char *set)
{
	size_t i;

	for (i = 0; i < n && !strchr(set, p[i]); i++)
		;
	return i;
}

int stream_ident_split(const char *p, size_t n, size_t *date_at,
		       const char **why)
{
	size_t i = strcspn_n(p, n, "<>"), j;

	/* fast-import backs up onto the space before a leading '<' */
	if (i == n || p[i] != '<') {
		*why = "missing < in the ident";
		return -1;
	}
	if (i > 0 && p[i - 1] != ' ') {
		*why = "missing space before < in the ident";
		return -1;
	}
	j = i + 1 + strcspn_n(p + i + 1, n - i - 1, "<>");
	if (j == n || p[j] != '>') {
		*why = "missing > in the ident";
		return -1;
	}
	if (j + 1 == n || p[j + 1] != ' ') {
		*why = "missing space after > in the ident";
		return -1;
	}
	*date_at = j + 2;
	return 0;
}
