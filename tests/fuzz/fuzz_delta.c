/*
 * fuzz_delta.c - libFuzzer target for the delta maker (rewrite/git/delta.c):
 * from the input a base and a target, delta_create makes a delta, which the
 * decoder (pack_delta_apply) must turn back into the target exactly; a
 * limit one byte under that delta's length must give 0 and leave the
 * buffer as it was. delta_create_tree, the maker for trees, must give a
 * delta that makes the target too, whatever the bytes (trees or not).
 *
 * The input's first byte picks how the two are made:
 *  bit 0 clear: the rest split in two where the next two bytes say;
 *  bit 0 set: the rest split the same way, the second part an edit script
 *     played on the first (pairs of an operation and a length: copy from
 *     the base, skip in the base, insert bytes of the script, copy again
 *     from further back), so that the two look alike as versions do;
 *  bit 1 set: the base repeated to about 64 KiB first (runs, recurring
 *     lines, windows of the walk's searches).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rewrite/git/git.h"

#define BIG ((size_t)64 << 10)

/* target from base by the script s[0..n) */
static size_t play(const uint8_t *b, size_t bn, const uint8_t *s, size_t n,
		   uint8_t *t, size_t cap)
{
	size_t i = 0, bi = 0, tn = 0;

	while (i + 2 <= n && tn < cap) {
		size_t op = s[i] & 3, k = (size_t)s[i + 1] + 1;

		i += 2;
		if (k > cap - tn)
			k = cap - tn;
		switch (op) {
		case 0:		/* copy on */
			if (k > bn - bi)
				k = bn - bi;
			memcpy(t + tn, b + bi, k);
			tn += k;
			bi += k;
			break;
		case 1:		/* skip */
			bi = k > bn - bi ? bn : bi + k;
			break;
		case 2:		/* insert */
			if (k > n - i)
				k = n - i;
			memcpy(t + tn, s + i, k);
			tn += k;
			i += k;
			break;
		default:	/* copy again from further back */
			bi = bi > k * 64 ? bi - k * 64 : 0;
			break;
		}
	}
	if (bi < bn && cap - tn >= bn - bi) {	/* the rest of the base */
		memcpy(t + tn, b + bi, bn - bi);
		tn += bn - bi;
	}
	return tn;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct buf out = BUF_INIT((size_t)1 << 24);
	uint8_t *base, *target, *res;
	size_t split, bn, tn, len, rn;
	const char *why;
	int mode;

	if (n < 3)
		return 0;
	mode = d[0];
	split = ((size_t)d[1] << 8 | d[2]) % (n - 3 + 1);
	d += 3;
	n -= 3;
	bn = split;
	if ((mode & 2) && bn) {
		size_t i;

		base = malloc(BIG + bn);
		for (i = 0; i + bn <= BIG; i += bn)
			memcpy(base + i, d, bn);
		bn = i;
	} else {
		base = malloc(bn + 1);
		memcpy(base, d, bn);
	}
	if (mode & 1) {
		size_t cap = 2 * bn + 2 * (n - split) + 64;

		target = malloc(cap);
		tn = play(base, bn, d + split, n - split, target, cap);
	} else {
		tn = n - split;
		target = malloc(tn + 1);
		memcpy(target, d + split, tn);
	}
	if (delta_create(base, bn, target, tn, SIZE_MAX, &out) != 1)
		abort();
	if (pack_delta_apply(base, bn, (const unsigned char *)out.ptr, out.len,
			     (uint64_t)1 << 32, &res, &rn, &why) != 0 ||
	    rn != tn || memcmp(res, target, tn) != 0)
		abort();
	free(res);
	len = out.len;
	buf_reset(&out);
	buf_adds(&out, "x");
	if (delta_create(base, bn, target, tn, len - 1, &out) != 0 ||
	    out.len != 1 || out.ptr[1] != '\0')
		abort();
	if (delta_create(base, bn, target, tn, len, &out) != 1 ||
	    out.len != 1 + len)
		abort();
	/* the tree maker, on the same pair: any bytes, a right delta */
	buf_reset(&out);
	if (delta_create_tree(base, bn, target, tn, SIZE_MAX, &out) != 1 ||
	    pack_delta_apply(base, bn, (const unsigned char *)out.ptr, out.len,
			     (uint64_t)1 << 32, &res, &rn, &why) != 0 ||
	    rn != tn || memcmp(res, target, tn) != 0)
		abort();
	free(res);
	buf_release(&out);
	free(base);
	free(target);
	return 0;
}
