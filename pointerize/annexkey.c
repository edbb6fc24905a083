/*
 * annexkey.c - git-annex SHA256E keys and the hashdirmixed object directories
 * (docs/FORMATS.md §8; git-annex Backend/Utilities.hs selectExtension and
 * Annex/DirHashes.hs).
 */
#include "pointerize/pointerize.h"

#include <inttypes.h>
#include <string.h>

#include <openssl/evp.h>

#define ANNEX_MAX_EXT_LEN 4 /* annex.maxextensionlength */
#define ANNEX_MAX_EXTS 2    /* components kept */

/* One extension component, a view into the file name. */
struct ext_part {
	const char *p;
	size_t n;
};

/* validInExtension: ASCII alphanumerics, and any byte >= 0x80. */
static int ext_valid(const struct ext_part *x)
{
	size_t i;

	for (i = 0; i < x->n; i++) {
		unsigned char c = (unsigned char)x->p[i];
		if (c >= 0x80 || (c >= '0' && c <= '9') ||
		    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			continue;
		return 0;
	}
	return 1;
}

/*
 * selectExtension steps 3-4 from the right of ext (the text after the
 * first '.'): walk the components while each is <= 4 bytes, keeping the
 * valid ones, until ANNEX_MAX_EXTS are kept. Empty components count
 * towards the two, as in git-annex (they are dropped afterwards).
 * Returns how many were kept, rightmost first.
 */
static size_t ext_pick(const char *ext, size_t n,
		       struct ext_part keep[ANNEX_MAX_EXTS])
{
	size_t count = 0, end = n;

	for (;;) {
		struct ext_part x;
		size_t start = end;

		while (start > 0 && ext[start - 1] != '.')
			start--;
		if (end - start > ANNEX_MAX_EXT_LEN)
			break;
		x.p = ext + start;
		x.n = end - start;
		if (ext_valid(&x))
			keep[count++] = x;
		if (count == ANNEX_MAX_EXTS || start == 0)
			break;
		end = start - 1; /* skip the '.' */
	}
	return count;
}

/*
 * selectExtension (docs/FORMATS.md §8 steps 1-5): basename, leading dots
 * stripped, everything after the first '.', split on '.'; then ext_pick;
 * then empty components dropped. Appends ".x.y" (or nothing) to b.
 */
static int annex_ext(struct buf *b, const char *filename)
{
	struct ext_part keep[ANNEX_MAX_EXTS];
	const char *base, *dot, *slash;
	size_t nkeep;

	if (!filename)
		return 0;
	slash = strrchr(filename, '/');
	base = slash ? slash + 1 : filename;
	while (*base == '.')
		base++;
	dot = strchr(base, '.');
	if (!dot)
		return 0;
	nkeep = ext_pick(dot + 1, strlen(dot + 1), keep);
	while (nkeep > 0) {
		const struct ext_part *x = &keep[--nkeep];
		if (x->n > 0 && (buf_addch(b, '.') < 0 ||
				 buf_add(b, x->p, x->n) < 0))
			return -1;
	}
	return 0;
}

/* "<backend>-s<size>--<hex>", and the extension of filename when ext. */
static int annex_key(struct buf *out, const char *backend,
		     const struct ptr_oid *oid, uint64_t size,
		     const char *filename, int ext)
{
	struct buf tmp = BUF_INIT(out->max);
	char hex[PTR_OID_HEXSZ + 1];
	int r;

	ptr_oid_hex(oid, hex);
	r = buf_printf(&tmp, "%s-s%" PRIu64 "--%s", backend, size, hex);
	if (r == 0 && ext)
		r = annex_ext(&tmp, filename);
	if (r == 0)
		r = buf_set(out, tmp.ptr, tmp.len);
	buf_release(&tmp);
	return r;
}

int ptr_annex_key(struct buf *out, const struct ptr_oid *oid, uint64_t size,
		  const char *filename)
{
	return annex_key(out, "SHA256E", oid, size, filename, 1);
}

int ptr_annex_hashdirmixed(const char *key, char out[6])
{
	static const char ch[] = "0123456789zqjxkmvwgpfZQJXKMVWGPF";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	uint32_t w;
	char c[4];
	int i;

	if (EVP_Digest(key, strlen(key), md, &mdlen, EVP_md5(), NULL) != 1 ||
	    mdlen < 4)
		return -1;
	/* docs/FORMATS.md §8: little-endian word of the first 4 md5 bytes */
	w = (uint32_t)md[0] | (uint32_t)md[1] << 8 | (uint32_t)md[2] << 16 |
	    (uint32_t)md[3] << 24;
	for (i = 0; i < 4; i++)
		c[i] = ch[(w >> (6 * i)) & 31];
	out[0] = c[1];
	out[1] = c[0];
	out[2] = '/';
	out[3] = c[3];
	out[4] = c[2];
	out[5] = '\0';
	return 0;
}

int ptr_annex_key_backend(struct buf *out, enum ptr_annex_backend backend,
			  const struct ptr_oid *oid, uint64_t size,
			  const char *filename)
{
	if (backend == PTR_ANNEX_SHA256E)
		return annex_key(out, "SHA256E", oid, size, filename, 1);
	return annex_key(out, "SHA256", oid, size, NULL, 0);
}

int ptr_annex_hashdirlower(const char *key, char out[8])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char d[7];

	if (EVP_Digest(key, strlen(key), md, &mdlen, EVP_md5(), NULL) != 1 ||
	    mdlen < 3)
		return -1;
	hex_encode(md, 3, d);
	/* Annex/DirHashes.hs hashDirLower: "abc/def" */
	memcpy(out, d, 3);
	out[3] = '/';
	memcpy(out + 4, d + 3, 3);
	out[7] = '\0';
	return 0;
}

int ptr_annex_pointer(struct buf *out, const char *key)
{
	struct buf tmp = BUF_INIT(out->max);
	int r = buf_printf(&tmp, "/annex/objects/%s\n", key);

	if (r == 0)
		r = buf_set(out, tmp.ptr, tmp.len);
	buf_release(&tmp);
	return r;
}

int ptr_annex_symlink(struct buf *out, const char *key, const char *path,
		      size_t len)
{
	struct buf tmp = BUF_INIT(out->max);
	char hd[6];
	size_t i;
	int r = ptr_annex_hashdirmixed(key, hd);

	for (i = 0; r == 0 && i < len; i++)
		if (path[i] == '/')
			r = buf_add(&tmp, "../", 3);
	if (r == 0)
		r = buf_printf(&tmp, ".git/annex/objects/%s/%s/%s", hd, key, key);
	if (r == 0)
		r = buf_set(out, tmp.ptr, tmp.len);
	buf_release(&tmp);
	return r;
}

int ptr_is_annex_pointer(const void *data, size_t len)
{
	static const char pre[] = "/annex/objects/";
	const char *p = data, *nl;
	size_t n = sizeof(pre) - 1, klen;

	if (len >= PTR_LFS_POINTER_MAX || len <= n || memcmp(p, pre, n))
		return 0;
	nl = memchr(p, '\n', len);
	klen = (nl ? (size_t)(nl - p) : len) - n;
	if (nl && (size_t)(nl - p) + 1 != len)
		return 0;	/* git-annex: the pointer is the first line only */
	if (klen == 0 || memchr(p + n, '/', klen) || memchr(p + n, '\0', klen))
		return 0;
	/* a key: BACKEND-...--NAME, the backend before the first '-' */
	return memchr(p + n, '-', klen) != NULL;
}
