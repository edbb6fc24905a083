/*
 * fuzz_lfs_pointer.c - libFuzzer target for pointerize's LFS pointer
 * recogniser, ptr_is_lfs_pointer(), which reads untrusted blob content.
 *
 * The input is classified as blob content, from an exact-size copy (ASan
 * reports any read past len) and again followed by other bytes (which
 * must not change the verdict). Each verdict is checked against two
 * checkers written here, apart from pointerize/lfs.c:
 *  - strict(): the canonical text of docs/FORMATS.md §7, what git-lfs
 *    writes: "version https://git-lfs.github.com/spec/v1" first, then the
 *    extension lines by increasing priority, "oid sha256:" and 64
 *    lowercase hex digits, "size " and a decimal without leading zero or
 *    sign (1..INT64_MAX), each line ending in one LF, nothing more; or
 *    empty. PTR_LFS_CANONICAL if and only if strict() holds.
 *  - loose(): git-lfs 3.3.0's decoder as pointerize.h describes it
 *    (under 1024 bytes, Go's unicode white space trimmed, LF lines with
 *    one CR dropped, blank lines skipped, version (one of three URLs) /
 *    oid / size in that order, ext-<digit>-<word> lines anywhere before
 *    size, nothing after it). A non-zero verdict if and only if loose().
 * From the input an oid (bytes 0..31) and a size (bytes 32..39) are also
 * derived: what ptr_lfs_pointer() writes for them must be recognised as
 * canonical (sizes over INT64_MAX must be refused), and variants of it
 * (CRLF, surrounding white space, "+size", an alias version, a blank line,
 * an extension after oid) must stay pointers but not canonical, while
 * broken ones (uppercase hex, a short oid, keys out of order, a line
 * after size) must not be pointers at all.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pointerize/pointerize.h"

#define LATEST "https://git-lfs.github.com/spec/v1"

/* Does p[0..n) start with the NUL-terminated s? */
static int starts(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);

	return n >= k && !memcmp(p, s, k);
}

static int lower_hex(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", p[i]) || !p[i])
			return 0;
	return 1;
}

static int is_word(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

/* "sha256:" and exactly 64 lowercase hex digits, the whole of p[0..n). */
static int sha256_value(const char *p, size_t n)
{
	return n == 7 + 64 && starts(p, n, "sha256:") && lower_hex(p + 7, 64);
}

/* Decimal digits only, at least one, value <= INT64_MAX; *zero tells
 * whether the value is 0. */
static int int64_digits(const char *p, size_t n, int *zero)
{
	static const char max[] = "9223372036854775807";
	size_t i;

	while (n > 1 && p[0] == '0') {
		p++;
		n--;
	}
	if (n == 0 || n > sizeof(max) - 1)
		return 0;
	for (i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return 0;
	if (n == sizeof(max) - 1 && memcmp(p, max, n) > 0)
		return 0;
	*zero = n == 1 && p[0] == '0';
	return 1;
}

/* The canonical pointer text, byte for byte (docs/FORMATS.md §7). */
static int strict(const char *p, size_t n)
{
	const char *nl;
	int last = -1, zero;
	size_t k;

	if (n == 0)
		return 1;
	if (!starts(p, n, "version " LATEST "\n"))
		return 0;
	p += strlen("version " LATEST "\n");
	n -= strlen("version " LATEST "\n");
	while (starts(p, n, "ext-")) {
		/* ext-<priority>-<name> sha256:<hex>, priorities increasing */
		if (n < 7 || p[4] < '0' || p[4] > '9' || p[5] != '-' ||
		    p[4] - '0' <= last || !is_word((unsigned char)p[6]))
			return 0;
		last = p[4] - '0';
		nl = memchr(p, '\n', n);
		if (!nl)
			return 0;
		for (k = 7; p + k < nl && p[k] != ' '; k++)
			;
		if (p + k == nl || !sha256_value(p + k + 1, (size_t)(nl - p) - k - 1))
			return 0;
		n -= (size_t)(nl - p) + 1;
		p = nl + 1;
	}
	if (!starts(p, n, "oid sha256:") || n < 11 + 64 + 1 ||
	    !lower_hex(p + 11, 64) || p[11 + 64] != '\n')
		return 0;
	p += 11 + 64 + 1;
	n -= 11 + 64 + 1;
	if (!starts(p, n, "size ") || p[n - 1] != '\n' || n < 7 || p[5] == '0')
		return 0;
	return int64_digits(p + 5, n - 6, &zero) && !zero;
}

/*
 * The code point of the valid UTF-8 sequence of exactly n bytes at p, or
 * -1 (overlong forms and surrogates are not valid, as for Go).
 */
static long utf8_cp(const unsigned char *p, size_t n)
{
	static const long min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	long cp;
	size_t i;

	if (n == 1)
		return p[0] < 0x80 ? p[0] : -1;
	if (n == 2 && (p[0] & 0xe0) == 0xc0)
		cp = p[0] & 0x1f;
	else if (n == 3 && (p[0] & 0xf0) == 0xe0)
		cp = p[0] & 0x0f;
	else if (n == 4 && (p[0] & 0xf8) == 0xf0)
		cp = p[0] & 0x07;
	else
		return -1;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	return cp;
}

/* Go's unicode.IsSpace. */
static int go_space(long c)
{
	return (c >= '\t' && c <= '\r') || c == ' ' || c == 0x85 || c == 0xa0 ||
	       c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
	       c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* Go's bytes.TrimSpace: whole runes, decoded from the front (the first
 * length that decodes) and from the back (utf8.DecodeLastRune: the last
 * start byte among the final four must decode up to the end). */
static void go_trim(const unsigned char **p, size_t *n)
{
	size_t k, start;

	while (*n) {
		for (k = 1; k <= 4 && k <= *n; k++)
			if (utf8_cp(*p, k) >= 0)
				break;
		if (k > 4 || k > *n || !go_space(utf8_cp(*p, k)))
			break;
		*p += k;
		*n -= k;
	}
	while (*n) {
		start = *n - 1;
		while (start > 0 && *n - start < 4 && ((*p)[start] & 0xc0) == 0x80)
			start--;
		if (!go_space(utf8_cp(*p + start, *n - start)))
			break;
		*n = start;
	}
}

/* strconv.ParseInt(s, 10, 64) >= 0: an optional sign, then digits. */
static int go_size(const char *p, size_t n)
{
	int neg = n && p[0] == '-', zero;

	if (n && (p[0] == '+' || p[0] == '-')) {
		p++;
		n--;
	}
	return int64_digits(p, n, &zero) && (!neg || zero);
}

/* git-lfs 3.3.0's decoder, as pointerize.h describes it. */
static int loose(const unsigned char *data, size_t len)
{
	static const char *const want[] = { "version", "oid", "size" };
	static const char *const urls[] = { "http://git-media.io/v/2",
					    "https://hawser.github.com/spec/v1",
					    LATEST };
	const char *ext_name[10] = { 0 }, *ext_val[10] = { 0 }, *val[3] = { 0 };
	size_t ext_len[10] = { 0 }, ext_vlen[10] = { 0 }, val_len[3] = { 0 };
	const unsigned char *p = data;
	size_t n = len, i, k;
	int keys = 0, ok;

	if (len == 0)
		return 1;
	if (len >= 1024)
		return 0;
	go_trim(&p, &n);
	while (n) {
		const unsigned char *nl = memchr(p, '\n', n);
		const char *line = (const char *)p, *sp;
		size_t l = nl ? (size_t)(nl - p) : n;

		p += nl ? l + 1 : l;
		n -= nl ? l + 1 : l;
		if (l && line[l - 1] == '\r')
			l--;
		if (!l)
			continue;
		sp = memchr(line, ' ', l);
		if (!sp || keys == 3)
			return 0;
		k = (size_t)(sp - line);
		if (k == strlen(want[keys]) && !memcmp(line, want[keys], k)) {
			val[keys] = sp + 1;
			val_len[keys++] = l - k - 1;
			continue;
		}
		/* ext-<digit>-<word>...: one name per priority */
		if (k < 7 || !starts(line, k, "ext-") || line[4] < '0' ||
		    line[4] > '9' || line[5] != '-' || !is_word((unsigned char)line[6]))
			return 0;
		i = (size_t)(line[4] - '0');
		if (ext_name[i] && (ext_len[i] != k - 6 ||
				    memcmp(ext_name[i], line + 6, k - 6)))
			return 0;
		ext_name[i] = line + 6;
		ext_len[i] = k - 6;
		/* a repeated key keeps its last value (git-lfs's map) */
		ext_val[i] = sp + 1;
		ext_vlen[i] = l - k - 1;
	}
	if (keys != 3)
		return 0;
	for (i = 0; i < 10; i++)
		if (ext_name[i] && !sha256_value(ext_val[i], ext_vlen[i]))
			return 0;
	for (ok = 0, i = 0; i < 3; i++)
		ok |= val_len[0] == strlen(urls[i]) && !memcmp(val[0], urls[i], val_len[0]);
	return ok && sha256_value(val[1], val_len[1]) && go_size(val[2], val_len[2]);
}

/* The verdict on an exact-size copy, and with other bytes after it. */
static int classify(const uint8_t *data, size_t size)
{
	static const char *const tails[] = { "\n", " ", "size 1\n", "\r\n",
					     "x", "\xc2\x85" };
	char *copy = malloc(size ? size : 1), *longer;
	int v, w;
	size_t i;

	memcpy(copy, data, size);
	v = ptr_is_lfs_pointer(copy, size);
	free(copy);
	if (v != PTR_LFS_NOT_POINTER && v != PTR_LFS_CANONICAL &&
	    v != PTR_LFS_NONCANONICAL)
		abort();
	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		longer = malloc(size + strlen(tails[i]));
		memcpy(longer, data, size);
		memcpy(longer + size, tails[i], strlen(tails[i]));
		w = ptr_is_lfs_pointer(longer, size);
		free(longer);
		if (w != v)
			abort();
	}
	return v;
}

/* Both checkers must agree with the verdict. */
static int check(const uint8_t *data, size_t size)
{
	int v = classify(data, size);

	if ((v == PTR_LFS_CANONICAL) != strict((const char *)data, size))
		abort();
	if ((v != PTR_LFS_NOT_POINTER) != loose(data, size))
		abort();
	return v;
}

/* What git-lfs accepts but would write differently (kind 2), or refuses
 * (kind 0): a variant of the canonical text p of a pointer to hex, n. */
static void variant(struct buf *out, const struct buf *p, const char *hex,
		    unsigned k, int *kind)
{
	const char *oid = strstr(p->ptr, "\noid ") + 1;
	const char *size = strstr(p->ptr, "\nsize ") + 1;
	size_t i;

	buf_reset(out);
	*kind = PTR_LFS_NONCANONICAL;
	switch (k % 12) {
	case 0: /* CRLF */
		for (i = 0; i < p->len; i++)
			if ((p->ptr[i] == '\n' && buf_addch(out, '\r') < 0) ||
			    buf_addch(out, p->ptr[i]) < 0)
				abort();
		break;
	case 1: /* surrounding white space */
		buf_printf(out, " \t\xe3\x80\x80%s \xc2\xa0\n", p->ptr);
		break;
	case 2: /* "size +N" */
		buf_add(out, p->ptr, (size_t)(size - p->ptr) + 5);
		buf_printf(out, "+%s", size + 5);
		break;
	case 3: /* an alias version */
		buf_printf(out, "version https://hawser.github.com/spec/v1\n%s", oid);
		break;
	case 4: /* a blank line */
		buf_add(out, p->ptr, (size_t)(oid - p->ptr));
		buf_printf(out, "\n%s", oid);
		break;
	case 5: /* an extension after oid */
		buf_add(out, p->ptr, (size_t)(size - p->ptr));
		buf_printf(out, "ext-0-x sha256:%s\n%s", hex, size);
		break;
	case 6: /* no final LF */
		buf_add(out, p->ptr, p->len - 1);
		break;
	case 7: /* uppercase hex */
		buf_set(out, p->ptr, p->len);
		for (i = 0; i < 64; i++)
			if (out->ptr[oid - p->ptr + 11 + i] >= 'a')
				out->ptr[oid - p->ptr + 11 + i] -= 32;
		*kind = strcspn(hex, "abcdef") == 64 ? PTR_LFS_CANONICAL
						      : PTR_LFS_NOT_POINTER;
		break;
	case 8: /* 63 hex digits */
		buf_add(out, p->ptr, (size_t)(oid - p->ptr) + 11 + 63);
		buf_adds(out, size - 1);
		*kind = PTR_LFS_NOT_POINTER;
		break;
	case 9: /* size before oid */
		buf_add(out, p->ptr, (size_t)(oid - p->ptr));
		buf_adds(out, size);
		buf_add(out, oid, (size_t)(size - oid));
		*kind = PTR_LFS_NOT_POINTER;
		break;
	case 10: /* a line after size */
		buf_printf(out, "%sx y\n", p->ptr);
		*kind = PTR_LFS_NOT_POINTER;
		break;
	default: /* a key with no value */
		buf_add(out, p->ptr, (size_t)(oid - p->ptr));
		buf_adds(out, "oid\n");
		*kind = PTR_LFS_NOT_POINTER;
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf ptr = BUF_INIT(4096), var = BUF_INIT(4096);
	unsigned char raw[41] = { 0 };
	char hex[PTR_OID_HEXSZ + 1];
	struct ptr_oid oid;
	uint64_t n = 0;
	int i, kind;

	check(data, size);

	/* the pointer ptr_lfs_pointer writes for an oid and size taken
	 * from the input; byte 40 also picks small sizes and a variant */
	memcpy(raw, data, size < sizeof(raw) ? size : sizeof(raw));
	memcpy(oid.sha256, raw, sizeof(oid.sha256));
	for (i = 0; i < 8; i++)
		n |= (uint64_t)raw[32 + i] << (8 * i);
	if (raw[40] & 1)
		n &= 0xffff;
	if (ptr_lfs_pointer(&ptr, &oid, n) < 0) {
		if (n <= (uint64_t)INT64_MAX)
			abort();
		goto out;
	}
	if (n > (uint64_t)INT64_MAX || check((const uint8_t *)ptr.ptr, ptr.len) !=
					       PTR_LFS_CANONICAL)
		abort();
	if (n == 0) {
		if (ptr.len != 0)
			abort();
		goto out;
	}
	ptr_oid_hex(&oid, hex);
	if (!strstr(ptr.ptr, hex))
		abort();
	variant(&var, &ptr, hex, raw[40] >> 1, &kind);
	if (check((const uint8_t *)var.ptr, var.len) != kind)
		abort();
out:
	buf_release(&ptr);
	buf_release(&var);
	return 0;
}
