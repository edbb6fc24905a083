/*
 * lfs.c - Git LFS pointer text (docs/FORMATS.md §7): writing the canonical
 * pointer, and recognising pointers exactly as git-lfs 3.3.0 decodes them
 * (lfs/pointer.go: DecodeFrom, decodeKV, decodeKVData) so that a blob
 * git-lfs would take for a pointer is never converted a second time.
 */
#include "pointerize/pointerize.h"

#include <inttypes.h>
#include <string.h>

#define LFS_VERSION "https://git-lfs.github.com/spec/v1"
#define LFS_EXT_SLOTS 10 /* ext-<digit>-: priorities 0..9 */

void ptr_oid_hex(const struct ptr_oid *oid, char out[PTR_OID_HEXSZ + 1])
{
	hex_encode(oid->sha256, sizeof(oid->sha256), out);
}

/* One extension line, pointing into the data being classified. */
struct lfs_ext {
	const char *name, *value;
	size_t name_len, value_len;
	int set;
};

/* A decoded pointer; strings point into the data being classified. */
struct lfs_parsed {
	const char *version, *oid, *size;
	size_t version_len, oid_len, size_len;
	struct lfs_ext ext[LFS_EXT_SLOTS];
	uint64_t size_value;
};

/*
 * Appends the canonical text of a pointer (git-lfs Pointer.Encoded):
 * version, extensions by priority, oid, size; nothing at all for size 0.
 */
static int encode(struct buf *b, const char *hex, uint64_t size,
		  const struct lfs_ext *ext)
{
	int i;

	if (size == 0)
		return 0;
	if (buf_adds(b, "version " LFS_VERSION "\n") < 0)
		return -1;
	for (i = 0; ext && i < LFS_EXT_SLOTS; i++) {
		/* names and values as bytes: a NUL in them is kept, as
		 * git-lfs keeps it */
		if (ext[i].set &&
		    (buf_printf(b, "ext-%d-", i) < 0 ||
		     buf_add(b, ext[i].name, ext[i].name_len) < 0 ||
		     buf_addch(b, ' ') < 0 ||
		     buf_add(b, ext[i].value, ext[i].value_len) < 0 ||
		     buf_addch(b, '\n') < 0))
			return -1;
	}
	return buf_printf(b, "oid sha256:%.64s\nsize %" PRIu64 "\n", hex, size);
}

int ptr_lfs_pointer(struct buf *out, const struct ptr_oid *oid, uint64_t size)
{
	struct buf tmp = BUF_INIT(out->max);
	char hex[PTR_OID_HEXSZ + 1];
	int r;

	/* git-lfs reads the size as an int64 */
	if (size > (uint64_t)INT64_MAX)
		return -1;
	ptr_oid_hex(oid, hex);
	r = encode(&tmp, hex, size, NULL);
	if (r == 0)
		r = buf_set(out, tmp.ptr, tmp.len);
	buf_release(&tmp);
	return r;
}

/* ---- recognising pointers ---- */

/* Bytes of a 3-byte UTF-8 White_Space character, if a b c is one. */
static int space3(unsigned char a, unsigned char b, unsigned char c)
{
	if (a == 0xe1)
		return b == 0x9a && c == 0x80; /* U+1680 */
	if (a == 0xe2 && b == 0x80) /* U+2000..200A, 2028, 2029, 202F */
		return (c >= 0x80 && c <= 0x8a) || c == 0xa8 || c == 0xa9 ||
		       c == 0xaf;
	if (a == 0xe2)
		return b == 0x81 && c == 0x9f; /* U+205F */
	return a == 0xe3 && b == 0x80 && c == 0x80; /* U+3000 */
}

static int ascii_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

/*
 * Length of the whitespace character at the start (back == 0) or the end
 * (back == 1) of p[0..n), 0 if none: Go's unicode.IsSpace, which
 * bytes.TrimSpace uses in DecodeFrom (ASCII, U+0085, U+00A0, and the
 * 3-byte White_Space characters).
 */
static size_t space_len(const unsigned char *p, size_t n, int back)
{
	const unsigned char *q;

	if (n == 0)
		return 0;
	if (ascii_space(back ? p[n - 1] : p[0]))
		return 1;
	if (n >= 2) {
		q = back ? p + n - 2 : p;
		if (q[0] == 0xc2 && (q[1] == 0x85 || q[1] == 0xa0))
			return 2;
	}
	if (n >= 3) {
		q = back ? p + n - 3 : p;
		if (space3(q[0], q[1], q[2]))
			return 3;
	}
	return 0;
}

static int is_lower_hex64(const char *s, size_t n)
{
	size_t i;

	if (n != PTR_OID_HEXSZ)
		return 0;
	for (i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	}
	return 1;
}

/* git-lfs parseOid: exactly "sha256:" and 64 lowercase hex digits. */
static int valid_oid(const char *v, size_t n)
{
	return n > 7 && memcmp(v, "sha256:", 7) == 0 &&
	       is_lower_hex64(v + 7, n - 7);
}

static int word_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

/*
 * An extension line (git-lfs extRE `\Aext-\d{1}-\w+`, a prefix match).
 * A repeated key overwrites the earlier value, as git-lfs's map does; two
 * names with one priority are its "duplicate priority" error.
 */
static int take_ext(struct lfs_parsed *pp, const char *key, size_t klen,
		    const char *value, size_t vlen)
{
	struct lfs_ext *x;

	if (klen < 7 || memcmp(key, "ext-", 4) != 0 || key[4] < '0' ||
	    key[4] > '9' || key[5] != '-' || !word_char(key[6]))
		return -1;
	x = &pp->ext[key[4] - '0'];
	if (x->set && (x->name_len != klen - 6 ||
		       memcmp(x->name, key + 6, klen - 6) != 0))
		return -1;
	x->set = 1;
	x->name = key + 6;
	x->name_len = klen - 6;
	x->value = value;
	x->value_len = vlen;
	return 0;
}

/*
 * One non-empty line of decodeKVData: "key SP value"; the keys version,
 * oid, size in this order (*nkeys counts them), extension lines anywhere
 * before size.
 */
static int take_line(struct lfs_parsed *pp, int *nkeys, const char *line,
		     size_t n)
{
	static const char *const keys[] = { "version", "oid", "size" };
	const char *sp = memchr(line, ' ', n);
	const char *v;
	size_t klen, vlen;

	if (!sp || *nkeys >= 3)
		return -1;
	klen = (size_t)(sp - line);
	v = sp + 1;
	vlen = n - klen - 1;
	if (klen != strlen(keys[*nkeys]) || memcmp(line, keys[*nkeys], klen))
		return take_ext(pp, line, klen, v, vlen);
	if (*nkeys == 0) {
		pp->version = v;
		pp->version_len = vlen;
	} else if (*nkeys == 1) {
		pp->oid = v;
		pp->oid_len = vlen;
	} else {
		pp->size = v;
		pp->size_len = vlen;
	}
	(*nkeys)++;
	return 0;
}

/* Splits like bufio.ScanLines: LF ends a line, one CR before it goes. */
static int take_lines(struct lfs_parsed *pp, const char *p, size_t n)
{
	int nkeys = 0;

	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) : n;
		size_t next = nl ? len + 1 : len;

		if (len > 0 && p[len - 1] == '\r')
			len--;
		if (len > 0 && take_line(pp, &nkeys, p, len) < 0)
			return -1;
		p += next;
		n -= next;
	}
	return nkeys == 3 ? 0 : -1;
}

/*
 * verifyVersion: the three URLs git-lfs accepts as v1. Each contains
 * "git-media", "hawser" or "git-lfs", so git-lfs's matcherRE header test
 * is implied.
 */
static int valid_version(const char *v, size_t n)
{
	static const char *const aliases[] = {
		"http://git-media.io/v/2",
		"https://hawser.github.com/spec/v1",
		LFS_VERSION,
	};
	size_t i;

	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (strlen(aliases[i]) == n && memcmp(aliases[i], v, n) == 0)
			return 1;
	}
	return 0;
}

/* strconv.ParseInt(s, 10, 64) with size >= 0: optional sign, digits. */
static int valid_size(const char *s, size_t n, uint64_t *out)
{
	int neg = 0;

	if (n > 0 && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		s++;
		n--;
	}
	if (parse_u64(s, n, (uint64_t)INT64_MAX, out) < 0)
		return 0;
	return !neg || *out == 0; /* "-0" is 0 to Go, hence valid */
}

static int valid_fields(struct lfs_parsed *pp)
{
	int i;

	if (!valid_version(pp->version, pp->version_len) ||
	    !valid_oid(pp->oid, pp->oid_len) ||
	    !valid_size(pp->size, pp->size_len, &pp->size_value))
		return 0;
	for (i = 0; i < LFS_EXT_SLOTS; i++) {
		if (pp->ext[i].set &&
		    !valid_oid(pp->ext[i].value, pp->ext[i].value_len))
			return 0;
	}
	return 1;
}

/* --strict: would git-lfs write exactly these bytes? */
static int canonical(const struct lfs_parsed *pp, const void *data, size_t len)
{
	struct buf b = BUF_INIT(PTR_LFS_POINTER_MAX * 2);
	int r;

	r = encode(&b, pp->oid + 7, pp->size_value, pp->ext) == 0 &&
	    b.len == len && memcmp(b.ptr, data, len) == 0;
	buf_release(&b);
	return r;
}

/* Decodes data as git-lfs does into *pp; the kind (ptr_is_lfs_pointer). */
static int decode(struct lfs_parsed *pp, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t n = len, k;

	memset(pp, 0, sizeof(*pp));
	/* An empty file is its own pointer (docs/FORMATS.md §7). */
	if (len == 0)
		return PTR_LFS_CANONICAL;
	/* DecodePointerFromBlob: blobs of 1024 bytes and more are content */
	if (len >= PTR_LFS_POINTER_MAX)
		return PTR_LFS_NOT_POINTER;
	while ((k = space_len(p, n, 0)) > 0) {
		p += k;
		n -= k;
	}
	while ((k = space_len(p, n, 1)) > 0)
		n -= k;
	if (take_lines(pp, (const char *)p, n) < 0 || !valid_fields(pp))
		return PTR_LFS_NOT_POINTER;
	return canonical(pp, data, len) ? PTR_LFS_CANONICAL
					: PTR_LFS_NONCANONICAL;
}

int ptr_is_lfs_pointer(const void *data, size_t len)
{
	struct lfs_parsed pp;

	return decode(&pp, data, len);
}

int ptr_lfs_decode(const void *data, size_t len, struct ptr_oid *oid,
		   uint64_t *size, int *has_ext)
{
	struct lfs_parsed pp;
	int kind = decode(&pp, data, len), i;

	memset(oid, 0, sizeof(*oid));
	*size = 0;
	*has_ext = 0;
	if (kind == PTR_LFS_NOT_POINTER || len == 0)
		return kind;
	/* valid_oid checked "sha256:" and 64 lowercase hex digits */
	hex_decode(pp.oid + 7, sizeof(oid->sha256), oid->sha256);
	*size = pp.size_value;
	for (i = 0; i < LFS_EXT_SLOTS; i++)
		*has_ext |= pp.ext[i].set;
	return kind;
}
